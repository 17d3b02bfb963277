import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// The change feed: REST writes enter it in order, pages resume from cursors, and purged tombstones force a resync.
@Suite struct SyncTests {
    static func pull(_ client: any TestClientProtocol, _ token: String, _ query: String = "") async throws -> [String: Any] {
        let response = try await client.json(.get, "/v1/sync/changes" + query, token: token)
        try #require(response.status == .ok, "pull answered \(response.status): \(String(buffer: response.body))")
        return try json(response)
    }

    static func changes(_ page: [String: Any]) -> [[String: Any]] { page["changes"] as? [[String: Any]] ?? [] }

    static func planBody(_ name: String) -> [String: Any] {
        ["name": name, "startDate": "2026-11-02", "daysPerWeek": 3, "weeklyWorkouts": []]
    }

    @Test(arguments: TestEngines.all)
    func restWritesEnterTheFeedInOrder(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let database = app.database
            try await CatalogImporter.importCatalog(([CatalogTests.fixture[0]], []), into: database, now: .storageNow)
            let owner = try await client.signUp()
            let other = try await client.signUp()
            let token = owner.accessToken

            let plan = try json(try await client.json(.post, "/v1/plans", body: Self.planBody("Base"), token: token))
            let planID = try #require(plan["id"] as? String)
            #expect(plan["version"] as? Int == 1)
            let renamed = try json(try await client.json(.put, "/v1/plans/\(planID)", body: Self.planBody("Build"), token: token))
            #expect(renamed["version"] as? Int == 2)
            let log = try json(try await client.json(.post, "/v1/history", body: [
                "workoutId": CatalogTests.fixture[0].id.description, "completedAt": "2026-11-20T08:00:00Z", "duration": 25,
            ], token: token))
            let logID = try #require(log["id"] as? String)
            let period = try json(try await client.json(
                .post, "/v1/cycle/periods", body: ["startDate": LocalCalendar.today(in: nil).adding(days: -3).description], token: token
            ))
            try await client.json(.patch, "/v1/me", body: ["fitnessLevel": "advanced"], token: token)
            #expect(try await client.json(.delete, "/v1/history/\(logID)", token: token).status == .noContent)

            let all = try await Self.pull(client, token)
            let changes = Self.changes(all)
            #expect(changes.map { $0["collection"] as? String } == ["plans", "cycleLogs", "preferences", "workoutLogs"])
            #expect(all["hasMore"] as? Bool == false)
            let planChange = changes[0]
            #expect(planChange["id"] as? String == planID)
            #expect(planChange["version"] as? Int == 2)
            #expect((planChange["data"] as? [String: Any])?["name"] as? String == "Build")
            #expect((changes[1]["data"] as? [String: Any])?["id"] as? String == period["id"] as? String)
            #expect(changes[2]["id"] as? String == "profile")
            #expect((changes[2]["data"] as? [String: Any])?["fitnessLevel"] as? String == "advanced")
            // The deleted log is a tombstone: a version past its creation, no data.
            #expect(changes[3]["id"] as? String == logID)
            #expect(changes[3]["deleted"] as? Bool == true)
            #expect(changes[3]["version"] as? Int == 2)
            #expect(changes[3]["data"] == nil)

            // Paging: two at a time, resuming from each cursor, gives the same changes.
            var paged: [String] = []
            var cursor: String? = nil
            var pages = 0
            repeat {
                let page = try await Self.pull(client, token, "?limit=2" + (cursor.map { "&since=\($0)" } ?? ""))
                paged += Self.changes(page).compactMap { $0["id"] as? String }
                cursor = page["cursor"] as? String
                pages += 1
                if page["hasMore"] as? Bool != true { break }
            } while pages < 10
            #expect(paged == changes.compactMap { $0["id"] as? String })
            let end = try await Self.pull(client, token, "?since=\(try #require(cursor))")
            #expect(Self.changes(end).isEmpty)
            #expect(end["cursor"] as? String == cursor)

            // A later change comes after the cursor, alone.
            try await client.json(.put, "/v1/plans/\(planID)", body: Self.planBody("Peak"), token: token)
            let next = Self.changes(try await Self.pull(client, token, "?since=\(try #require(cursor))"))
            #expect(next.map { $0["id"] as? String } == [planID])
            #expect(next.first?["version"] as? Int == 3)

            // Another user's feed holds none of it.
            let theirs = Self.changes(try await Self.pull(client, other.accessToken))
            #expect(!theirs.contains { [planID, logID, period["id"] as? String].contains($0["id"] as? String) })
        }
    }

    @Test(arguments: TestEngines.all)
    func aCursorOlderThanPurgedTombstonesMustResync(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let token = account.accessToken
            try await app.testDatabase.grant(.pro, toUser: account.id)  // more than one plan
            let kept = try json(try await client.json(.post, "/v1/plans", body: Self.planBody("Kept"), token: token))
            let cursor = try #require(try await Self.pull(client, token)["cursor"] as? String)
            let gone = try json(try await client.json(.post, "/v1/plans", body: Self.planBody("Gone"), token: token))
            try await client.json(.delete, "/v1/plans/\(try #require(gone["id"] as? String))", token: token)

            // Tombstones younger than the retention stay.
            let database = app.database
            #expect(try await SyncFeed.purge(before: Date.now.addingTimeInterval(-SyncFeed.tombstoneRetention), database: database) == 0)
            #expect(Self.changes(try await Self.pull(client, token, "?since=\(cursor)")).map { $0["deleted"] as? Bool } == [true])
            // Once purged, the old cursor cannot resume…
            #expect(try await SyncFeed.purge(before: Date.now.addingTimeInterval(60), database: database) == 1)
            try expectProblem(try await client.json(.get, "/v1/sync/changes?since=\(cursor)", token: token), .fullResyncRequired)
            // …and a full pull gives the surviving state.
            let full = try await Self.pull(client, token)
            #expect(Self.changes(full).map { $0["id"] as? String } == [kept["id"] as? String])
            let fresh = try #require(full["cursor"] as? String)
            #expect(Self.changes(try await Self.pull(client, token, "?since=\(fresh)")).isEmpty)
        }
    }

    @Test func badCursorsAndLimitsAreRefusedNamingTheParameter() async throws {
        try await withApp(.sqlite) { client, _ in
            let token = try await client.signUp().accessToken
            let cursor = try expectProblem(try await client.json(.get, "/v1/sync/changes?since=bm9wZQ", token: token), .invalidRequest)
            #expect((cursor["errors"] as? [[String: Any]])?.first?["field"] as? String == "since")
            let limit = try expectProblem(try await client.json(.get, "/v1/sync/changes?limit=0", token: token), .invalidRequest)
            #expect((limit["errors"] as? [[String: Any]])?.first?["field"] as? String == "limit")
        }
    }
}

/// Upgrading a database that has data: the feed migration enters every existing record.
@Suite struct SyncMigrationTests {
    /// The test database with every server migration before `migration` applied.
    static func database(_ testDatabase: TestDatabase, migratedUpTo migration: any Migration.Type) async throws -> Database {
        let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
        let before = Array(FitBaseMigrations.all.prefix { type(of: $0) != migration })
        try await MigrationRunner(database: database, migrations: before, logger: TestDatabase.logger).run()
        return database
    }

    @Test(arguments: TestEngines.all)
    func existingRecordsEnterTheFeed(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Self.database(testDatabase, migratedUpTo: CreateSyncFeed.self)
            let user = UUID()
            let plan = UUID()
            let now = Date.storageNow
            try await database.transaction { db in
                try await db.insert(into: "users").columns("id", "email", "role", "created_at", "updated_at")
                    .values(SQLBind(user), SQLBind("old@example.com"), SQLBind("user"), SQLBind(now), SQLBind(now)).run()
                try await db.insert(into: "training_plans")
                    .columns("id", "user_id", "name", "start_date", "days_per_week", "is_completed", "weekly_workouts", "version", "created_at", "updated_at")
                    .values(
                        SQLBind(plan), SQLBind(user), SQLBind("Old plan"), SQLBind("2026-01-05"), SQLBind(3), SQLBind(false), SQLBind("[]"),
                        SQLBind(4), SQLBind(now), SQLBind(now)
                    ).run()
            }
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
            let (position, changes) = try await database.withConnection { db in
                (try await SyncFeed.position(of: UserID(rawValue: user), on: db), try await SyncFeed.changes(of: UserID(rawValue: user), since: 0, limit: 10, on: db))
            }
            #expect(position.last == 1)
            #expect(changes.map(\.recordID) == [plan.uuidString.lowercased()])
            #expect(changes.first?.stamp.version == 4)
            // New changes continue the sequence.
            let next = try await database.transaction { db in
                try await SyncFeed.record(.plans, id: plan.uuidString.lowercased(), of: UserID(rawValue: user), deleted: true, updatedAt: now, changedAt: now, on: db)
            }
            #expect(next.seq == 2 && next.stamp.version == 5)
            try await database.shutdown()
        }
    }

    /// Health samples' live entries move onto their rows; tombstones stay, positions and versions are kept, and a
    /// sample that had no entry gets the next number.
    @Test(arguments: TestEngines.all)
    func healthSampleEntriesMoveOntoTheirRows(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Self.database(testDatabase, migratedUpTo: MoveHealthSampleFeedEntries.self)
            let user = UUID()
            let (first, second, orphan, deleted) = (UUID(), UUID(), UUID(), UUID())
            let now = Date.storageNow
            let written = now.addingTimeInterval(-3_600)
            try await database.transaction { db in
                try await db.insert(into: "users").columns("id", "email", "role", "created_at", "updated_at")
                    .values(SQLBind(user), SQLBind("old@example.com"), SQLBind("user"), SQLBind(now), SQLBind(now)).run()
                for (offset, id) in [first, second, orphan].enumerated() {
                    try await db.insert(into: "health_samples").columns("id", "user_id", "type", "start_at", "end_at", "key_id", "sealed", "created_at")
                        .values(
                            SQLBind(id), SQLBind(user), SQLBind("heartRate"), SQLBind(now.addingTimeInterval(Double(offset) * 60)), SQLBind(Date?.none),
                            SQLBind("key"), SQLBind(Data([1, 2, 3])), SQLBind(now)
                        ).run()
                }
                for (id, seq, version, isDeleted) in [(first, 2, 1, false), (second, 3, 3, false), (deleted, 4, 2, true)] {
                    try await db.insert(into: "sync_changes")
                        .columns("user_id", "collection", "record_id", "seq", "version", "deleted", "updated_at", "changed_at")
                        .values(
                            SQLBind(user), SQLBind("healthSamples"), SQLBind(id.uuidString.lowercased()), SQLBind(seq), SQLBind(version),
                            SQLBind(isDeleted), SQLBind(written), SQLBind(now)
                        ).run()
                }
                try await db.insert(into: "sync_sequences").columns("user_id", "last_seq", "purged_through")
                    .values(SQLBind(user), SQLBind(4), SQLBind(0)).run()
            }
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
            let (position, changes, entries) = try await database.withConnection { db in
                (
                    try await SyncFeed.position(of: UserID(rawValue: user), on: db),
                    try await SyncFeed.changes(of: UserID(rawValue: user), since: 0, limit: 10, on: db),
                    try await db.select().column("record_id").from("sync_changes").all().map { try $0.decode(column: "record_id", as: String.self) }
                )
            }
            #expect(position.last == 5)
            #expect(changes.map(\.recordID) == [first, second, deleted, orphan].map { $0.uuidString.lowercased() })
            #expect(changes.map(\.seq) == [2, 3, 4, 5])
            #expect(changes.map(\.stamp.version) == [1, 3, 2, 1])
            #expect(changes.map(\.stamp.deleted) == [false, false, true, false])
            #expect(changes[0].stamp.updatedAt == written && changes[3].stamp.updatedAt == now)
            #expect(entries == [deleted.uuidString.lowercased()])
            try await database.shutdown()
        }
    }
}

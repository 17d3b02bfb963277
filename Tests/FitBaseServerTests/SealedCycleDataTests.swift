import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// Cycle periods, the private fields of workout logs, the profile's last period date and the day's kept
/// recommendation are sealed under the owner's data key like health samples:
/// nothing of them is readable in the database (SQLite file and log, PostgreSQL rows, stored push results), a copy
/// taken before the account's deletion cannot be opened after it, and rows an earlier version stored in clear are
/// sealed as the server starts.
@Suite struct SealedCycleDataTests {
    let today = LocalCalendar.today(in: nil)

    @Test(arguments: TestEngines.all)
    func nothingPrivateIsReadableAndADeletedAccountCannotBeDecryptedFromACopy(engine: DatabaseEngine) async throws {
        let marker = "MARKER\(UUID().uuidString.prefix(8))"
        let start = today.adding(days: -123)
        let lastPeriod = today.adding(days: -61)
        try await withApp(engine, options: .init(demoCatalog: true)) { client, app in
            let account = try await client.signUp()
            let token = account.accessToken
            let profile = try await client.json(.patch, "/v1/me", body: ["lastPeriodStartDate": lastPeriod.description, "cycleTrackingEnabled": true], token: token)
            #expect(profile.status == .ok)
            #expect(try json(profile)["lastPeriodStartDate"] as? String == lastPeriod.description)
            let period = try await client.json(.post, "/v1/cycle/periods", body: [
                "startDate": start.description, "endDate": start.adding(days: 4).description, "flow": "heavy", "symptoms": ["cramps"],
                "notes": "period \(marker)",
            ], token: token)
            #expect(period.status == .created)
            let workouts = try #require(try json(try await client.json(.get, "/v1/workouts?limit=1", token: token))["items"] as? [[String: Any]])
            let workout = try #require(workouts.first?["id"] as? String)
            let log = try await client.json(.post, "/v1/history", body: [
                "workoutId": workout, "completedAt": Date.now.addingTimeInterval(-3_600).formatted(.iso8601), "duration": 30, "rating": 4,
                "energyBefore": 2, "energyAfter": 5, "notes": "log \(marker)",
            ], token: token)
            #expect(log.status == .created)
            // Pushed ones too, with a refused one whose result is stored (to answer a replay).
            let pushed = try await SyncPushTests.push(client, token, [
                SyncPushTests.mutation("cycleLogs", UUID().uuidString, data: ["startDate": start.adding(days: 30).description, "notes": "pushed \(marker)"]),
                SyncPushTests.mutation("cycleLogs", UUID().uuidString, data: ["startDate": start.description, "notes": "again \(marker)"]),
                SyncPushTests.mutation("workoutLogs", UUID().uuidString, data: [
                    "workoutId": workout, "completedAt": Date.now.addingTimeInterval(-7_200).formatted(.iso8601), "duration": 20, "notes": "pushed log \(marker)",
                ]),
            ])
            #expect(pushed.map { $0["status"] as? String } == ["applied", "rejected", "applied"])

            // Read back through the API: opened for the owner.
            let history = try #require(try json(try await client.json(.get, "/v1/cycle/history", token: token))["items"] as? [[String: Any]])
            #expect(history.compactMap { ($0["period"] as? [String: Any])?["notes"] as? String }.sorted() == ["period \(marker)", "pushed \(marker)"])
            #expect(history.last.flatMap { ($0["period"] as? [String: Any])?["startDate"] as? String } == start.description)
            let logs = try #require(try json(try await client.json(.get, "/v1/history", token: token))["items"] as? [[String: Any]])
            #expect(Set(logs.compactMap { $0["notes"] as? String }) == ["log \(marker)", "pushed log \(marker)"])
            #expect(logs.contains { $0["energyBefore"] as? Int == 2 && $0["energyAfter"] as? Int == 5 })
            let pulled = try json(try await client.json(.get, "/v1/sync/changes", token: token))
            let pulledNotes = (pulled["changes"] as? [[String: Any]] ?? []).compactMap { ($0["data"] as? [String: Any])?["notes"] as? String }
            #expect(Set(pulledNotes) == ["period \(marker)", "pushed \(marker)", "log \(marker)", "pushed log \(marker)"])
            // The profile's date is opened for the owner on every path that shows it, and the kept answer too.
            #expect(try json(try await client.json(.get, "/v1/me", token: token))["lastPeriodStartDate"] as? String == lastPeriod.description)
            let preferences = (pulled["changes"] as? [[String: Any]] ?? []).first { $0["collection"] as? String == "preferences" }?["data"] as? [String: Any]
            #expect(preferences?["lastPeriodStartDate"] as? String == lastPeriod.description)
            let recommended = try await RecommendationTests.today(client, token)
            let guidance = try #require(recommended["phaseGuidance"] as? String)
            let reasons = (recommended["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
            #expect(!reasons.isEmpty)
            #expect(try await RecommendationTests.today(client, token)["generatedAt"] as? String == recommended["generatedAt"] as? String)
            let export = try #require(try json(try await client.json(.get, "/v1/me/export", token: token))["sections"] as? [String: Any])
            #expect((export["account"] as? [String: Any])?["lastPeriodStartDate"] as? String == lastPeriod.description)
            #expect((export["dailyRecommendations"] as? [[String: Any]])?.first?["phaseGuidance"] as? String == guidance)
            #expect((export["cyclePeriods"] as? [[String: Any]])?.count == 2)
            #expect((export["workoutHistory"] as? [[String: Any]])?.contains { $0["notes"] as? String == "log \(marker)" && $0["energyBefore"] as? Int == 2 } == true)

            // Every access is in the user's audit chain, with counts only.
            _ = try await client.json(.get, "/v1/cycle/current", token: token)
            let trail = try #require(try json(try await client.json(.get, "/v1/me/audit?limit=100", token: token))["items"] as? [[String: Any]])
            let seen = Set(trail.map { "\($0["resource"] as? String ?? "") \($0["action"] as? String ?? "")" })
            #expect(seen.isSuperset(of: [
                "cyclePeriods write", "cyclePeriods sync", "cyclePeriods read", "cyclePeriods export",
                "workoutLogs write", "workoutLogs sync", "workoutLogs read", "workoutLogs export",
            ]))

            let database = app.database
            try await Self.expectUnreadable(
                [marker, start.description, start.adding(days: 30).description, lastPeriod.description, guidance] + reasons,
                engine: engine, in: database, at: app.testDatabase
            )
            #expect(try await AuditLog(database: database, clock: .system).verify().firstBreak == nil)

            // A copy of the rows taken before deletion…
            let user = UserID(rawValue: try #require(UUID(uuidString: account.id)))
            let (periodRows, logRows) = try await database.withConnection { db in
                (
                    try await db.select().columns("id", "key_id", "sealed").from("cycle_periods").where("user_id", .equal, user.rawValue).all()
                        .map { (try $0.decode(column: "id", as: UUID.self), SealedFields(keyID: try $0.decode(column: "key_id", as: String.self), sealed: try $0.decode(column: "sealed", as: Data.self))) },
                    try await db.select().columns("id", "key_id", "sealed").from("workout_logs").where("user_id", .equal, user.rawValue).all()
                        .map { (try $0.decode(column: "id", as: UUID.self), SealedFields(keyID: try $0.decode(column: "key_id", as: String.self), sealed: try $0.decode(column: "sealed", as: Data.self))) }
                )
            }
            #expect(periodRows.count == 2 && logRows.count == 2)
            let (vault, keysDatabase) = try await Self.vault(app.testDatabase, database)
            let key = try #require(try await vault.dataKey(of: user, creating: false))
            for (id, fields) in periodRows { #expect(throws: Never.self) { try vault.open(bytes: fields, table: CycleStore.table, id: id, of: user, with: key) } }
            // …and bound to its row: a ciphertext moved to another row does not open.
            #expect(throws: (any Error).self) { try vault.open(bytes: periodRows[0].1, table: CycleStore.table, id: periodRows[1].0, of: user, with: key) }
            #expect(throws: (any Error).self) { try vault.open(bytes: logRows[0].1, table: CycleStore.table, id: logRows[0].0, of: user, with: key) }

            #expect(try await client.json(.delete, "/v1/me", token: token).status == .noContent)
            // …cannot be opened afterwards: the data key is gone, wherever the copy went.
            // (A vault that has not cached it: this one holds it in memory from the reads above.)
            let fresh = HealthVault(keys: vault.keys, masterKey: vault.masterKey)
            #expect(try await fresh.dataKey(of: user, creating: false) == nil)
            let guessed = try #require(try await vault.dataKey(of: UserID(), creating: true))
            for (id, fields) in periodRows {
                #expect(throws: (any Error).self) {
                    try vault.open(bytes: SealedFields(keyID: guessed.id, sealed: fields.sealed), table: CycleStore.table, id: id, of: user, with: guessed)
                }
            }
            for (id, fields) in logRows {
                #expect(throws: (any Error).self) {
                    try vault.open(bytes: SealedFields(keyID: guessed.id, sealed: fields.sealed), table: HistoryStore.table, id: id, of: user, with: guessed)
                }
            }
            if keysDatabase !== database { try await keysDatabase.shutdown() }
        }
    }

    /// Periods and logs an earlier version stored in clear are sealed as the server starts: readable as before,
    /// nowhere in clear afterwards, and the clear table is gone.
    @Test(arguments: TestEngines.all)
    func clearRowsOfAnEarlierVersionAreSealedAsTheServerStarts(engine: DatabaseEngine) async throws {
        let marker = "MARKER\(UUID().uuidString.prefix(8))"
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await SyncMigrationTests.database(testDatabase, migratedUpTo: SealCyclePeriods.self)
            let user = UUID()
            let now = Date.storageNow
            let (first, second, logged, plain) = (UUID(), UUID(), UUID(), UUID())
            try await database.transaction { db in
                try await db.insert(into: "users").columns("id", "email", "role", "created_at", "updated_at")
                    .values(SQLBind(user), SQLBind("old@example.com"), SQLBind("user"), SQLBind(now), SQLBind(now)).run()
                for (id, start, notes) in [(first, "2026-03-01", "first \(marker)"), (second, "2026-03-29", nil)] {
                    try await db.insert(into: "cycle_periods")
                        .columns("id", "user_id", "start_date", "end_date", "flow", "symptoms", "notes", "created_at", "updated_at")
                        .values(
                            SQLBind(id), SQLBind(user), SQLBind(start), SQLBind("2026-03-05"), SQLBind("light"), SQLBind(#"["bloating"]"#),
                            SQLBind(notes), SQLBind(now), SQLBind(now)
                        ).run()
                }
                for (id, notes, phase) in [(logged, "log \(marker)", "luteal"), (plain, nil, nil)] {
                    try await db.insert(into: "workout_logs")
                        .columns(
                            "id", "user_id", "workout_id", "workout_type", "workout_title", "completed_at", "local_date", "duration_minutes", "rating",
                            "energy_before", "energy_after", "notes", "cycle_phase", "cycle_day", "created_at"
                        )
                        .values(
                            SQLBind(id), SQLBind(user), SQLBind(UUID()), SQLBind("yoga"), SQLBind("Flow"), SQLBind(now), SQLBind("2026-03-20"), SQLBind(30),
                            SQLBind(4), SQLBind(phase == nil ? nil : 2), SQLBind(phase == nil ? nil : 4), SQLBind(notes), SQLBind(phase),
                            SQLBind(phase == nil ? nil : 20), SQLBind(now)
                        ).run()
                }
            }
            // The profile's last period date and a kept answer, as earlier versions stored them.
            try await database.transaction { db in
                try await db.insert(into: "user_profiles")
                    .columns(
                        "user_id", "goals", "preferred_workout_types", "average_cycle_length", "average_period_length", "last_period_start_date",
                        "cycle_tracking_enabled", "share_workout_data", "time_zone", "updated_at"
                    )
                    .values(
                        SQLBind(user), SQLBind("[]"), SQLBind("[]"), SQLBind(31), SQLBind(5), SQLBind("2026-02-02"), SQLBind(true), SQLBind(true),
                        SQLBind("Europe/Lisbon"), SQLBind(now)
                    ).run()
                try await db.insert(into: "daily_recommendations")
                    .columns("user_id", "local_date", "fingerprint", "source", "generation", "answer", "generated_at", "variants")
                    .values(
                        SQLBind(user), SQLBind("2026-03-20"), SQLBind("f"), SQLBind("rules"), SQLBind(0),
                        SQLBind(#"{"items":[],"phaseGuidance":"guidance \#(marker)"}"#), SQLBind(now), SQLBind("[]")
                    ).run()
            }
            try await database.shutdown()

            // The server starts: migrations, then the sealing.
            let status = try await withApp(on: testDatabase) { client, _ in try await client.json(.get, "/healthz").status }
            #expect(status == .ok)

            let reopened = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let (vault, keysDatabase) = try await Self.vault(testDatabase, reopened)
            let owner = UserID(rawValue: user)
            let periods = try await CycleStore(database: reopened, vault: vault).periods(of: owner)
            #expect(periods.map(\.id.rawValue) == [first, second])
            #expect(periods.first?.notes == "first \(marker)" && periods.first?.symptoms == ["bloating"] && periods.first?.flow == .light)
            #expect(periods.first?.end?.description == "2026-03-05")
            let profile = try await ProfileStore(database: reopened, vault: vault).profile(of: owner)
            #expect(profile.lastPeriodStartDate == "2026-02-02" && profile.averageCycleLength == 31 && profile.timeZone == "Europe/Lisbon")
            #expect(try await RecommendationStore(database: reopened, vault: vault).kept(for: owner) == nil)
            let logs = try await HistoryStore(database: reopened, vault: vault).allLogs(of: owner)
            let sealed = try #require(logs.first { $0.id.rawValue == logged })
            #expect(sealed.notes == "log \(marker)" && sealed.cyclePhase == .luteal && sealed.cycleDay == 20 && sealed.energyBefore == 2 && sealed.energyAfter == 4)
            #expect(logs.first { $0.id.rawValue == plain }.map { $0.notes == nil && $0.cyclePhase == nil } == true)
            // Sealed once: a second start finds nothing left.
            #expect(try await CycleDataSealing(database: reopened, vault: vault).run(logger: TestDatabase.logger) == (periods: 0, logs: 0, profiles: 0))
            try await Self.expectUnreadable([marker, "2026-03-01", "2026-03-29", "2026-02-02", "bloating", "luteal"], engine: engine, in: reopened, at: testDatabase)
            if keysDatabase !== reopened { try await keysDatabase.shutdown() }
            try await reopened.shutdown()
        }
    }

    /// The single audit chain of earlier versions is checked and re-chained per user; a broken one is kept apart,
    /// not re-signed, and `verify` reports it.
    @Test(arguments: [(TestEngines.all[0], false), (TestEngines.all[0], true)] + (TestEngines.all.count > 1 ? [(TestEngines.all[1], false), (TestEngines.all[1], true)] : []))
    func theServersSingleAuditChainBecomesOneChainPerUser(engine: DatabaseEngine, tampered: Bool) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await SyncMigrationTests.database(testDatabase, migratedUpTo: ChainAuditPerUser.self)
            let (first, second) = (UUID(), UUID())
            var previous = AuditChain.genesis
            var legacy: [AuditEntry] = []
            for (seq, subject) in [first, second, first].enumerated() {
                var entry = AuditEntry(
                    seq: Int64(seq + 1), at: Date.storageNow, actorID: subject, subjectID: subject, action: "read", resource: "healthSamples",
                    count: seq, requestID: "r\(seq)", outcome: "success", prevHash: previous, hash: ""
                )
                entry.hash = AuditChain.legacyHash(of: entry)
                previous = entry.hash
                legacy.append(entry)
            }
            if tampered { legacy[1].count = 7 }
            let rows = legacy
            try await database.transaction { db in
                for entry in rows {
                    try await db.insert(into: "health_audit_log").columns(AuditLog.legacyColumns)
                        .values(
                            SQLBind(entry.seq), SQLBind(entry.at), SQLBind(entry.actorID), SQLBind(entry.subjectID), SQLBind(entry.action),
                            SQLBind(entry.resource), SQLBind(entry.count), SQLBind(entry.requestID), SQLBind(entry.outcome), SQLBind(entry.prevHash),
                            SQLBind(entry.hash)
                        ).run()
                }
            }
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
            let verdict = try await AuditLog(database: database, clock: .system).verify()
            if tampered {
                #expect(verdict.firstBreak?.reason.contains("health_audit_log_legacy") == true)
                #expect(try await database.tableExists("health_audit_log_legacy"))
            } else {
                #expect(verdict.firstBreak == nil && verdict.entries == 3 && verdict.chains == 2)
                let mine = try await AuditLog(database: database, clock: .system).entries(about: UserID(rawValue: first), offset: 0, limit: 10)
                #expect(mine.map(\.seq) == [2, 1] && mine.map(\.requestID) == ["r2", "r0"])
                #expect(try await database.tableExists("health_audit_log") == false)
            }
            try await database.shutdown()
        }
    }

    /// The private fields of a log are written as JSON by hand: every value, absent ones and awkward text survive.
    @Test func privateFieldsRoundTripThroughTheirJSON() throws {
        for fields in [
            HistoryStore.PrivateFields(energyBefore: 1, energyAfter: 5, notes: "quote \" backslash \\ newline \n tab \t bell \u{7} é 🏃", cyclePhase: "luteal", cycleDay: 23),
            HistoryStore.PrivateFields(energyBefore: nil, energyAfter: nil, notes: nil, cyclePhase: nil, cycleDay: nil),
            HistoryStore.PrivateFields(energyBefore: 3, energyAfter: nil, notes: "", cyclePhase: nil, cycleDay: 0),
        ] {
            #expect(try JSONDecoder().decode(HistoryStore.PrivateFields.self, from: fields.json) == fields)
        }
    }

    /// The test application's vault, over its key store.
    static func vault(_ testDatabase: TestDatabase, _ database: Database) async throws -> (HealthVault, Database) {
        let keystore = ServerConfiguration.testing(testDatabase).keystoreLocation
        let keysDatabase = keystore == testDatabase.location ? database : try await Database.open(keystore, logger: TestDatabase.logger)
        return (HealthVault(keys: HealthKeyStore(database: keysDatabase, clock: .system), masterKey: try MasterKey.load(for: .testing(testDatabase))), keysDatabase)
    }

    /// None of `secrets` is in the SQLite file and its log, or in any PostgreSQL row.
    static func expectUnreadable(_ secrets: [String], engine: DatabaseEngine, in database: Database, at testDatabase: TestDatabase) async throws {
        if engine == .sqlite {
            try await database.withConnection { try await $0.raw("PRAGMA wal_checkpoint(TRUNCATE)").run() }
            guard case .sqlite(let path) = testDatabase.location else { return }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path)) + ((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data())
            for secret in secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is readable in the SQLite file") }
        } else {
            let tables = try await database.withConnection { db in
                try await db.raw("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()").all()
                    .map { try $0.decode(column: "table_name", as: String.self) }
            }
            for table in tables {
                let text = try await database.withConnection { db in
                    try await db.raw("SELECT string_agg(t::text, ' ') AS dump FROM \(ident: table) t").first()?.decode(column: "dump", as: String?.self) ?? ""
                }
                for secret in secrets { #expect(!text.contains(secret), "\(secret) is readable in \(table)") }
            }
        }
    }
}

import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// `POST /v1/sync/push`: per-mutation results, replay, REST validation, conflict policies and ownership.
@Suite struct SyncPushTests {
    static let workout = CatalogTests.fixture[0].id.description
    static let otherWorkout = CatalogTests.fixture[1].id.description

    static func withSyncApp(_ engine: DatabaseEngine, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await withApp(engine) { client, app in
            try await CatalogImporter.importCatalog((Array(CatalogTests.fixture.prefix(2)), []), into: app.database, now: .storageNow)
            try await body(client)
        }
    }

    static func mutation(
        _ collection: String, _ id: String, op: String = "upsert", base: Int? = nil, at updatedAt: String = "2026-11-20T10:00:00Z",
        data: [String: Any]? = nil, mutationID: String = UUID().uuidString
    ) -> [String: Any] {
        var mutation: [String: Any] = ["mutationId": mutationID, "collection": collection, "id": id, "op": op, "updatedAt": updatedAt]
        if let base { mutation["baseVersion"] = base }
        if let data { mutation["data"] = data }
        return mutation
    }

    static func push(_ client: any TestClientProtocol, _ token: String, _ mutations: [[String: Any]]) async throws -> [[String: Any]] {
        let response = try await client.json(.post, "/v1/sync/push", body: ["mutations": mutations], token: token)
        try #require(response.status == .ok, "push answered \(response.status): \(String(buffer: response.body))")
        let results = try #require(try json(response)["results"] as? [[String: Any]])
        try #require(results.count == mutations.count)
        return results
    }

    static func plan(_ name: String) -> [String: Any] {
        ["name": name, "startDate": "2026-11-02", "daysPerWeek": 3, "weeklyWorkouts": [["week": 1, "days": [["day": 1, "workoutIds": [workout]]]]]]
    }

    static func log(_ workout: String = workout, minutes: Int = 30) -> [String: Any] {
        ["workoutId": workout, "completedAt": "2026-11-20T07:30:00Z", "duration": minutes, "rating": 4]
    }

    static func fields(_ result: [String: Any]) -> [String] {
        ((result["problem"] as? [String: Any])?["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
    }

    @Test(arguments: TestEngines.all)
    func eachCollectionAppliesAndAReplayChangesNothing(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            let token = try await client.signUp().accessToken
            let planID = UUID().uuidString.lowercased()
            let logID = UUID().uuidString
            let periodID = UUID().uuidString.lowercased()
            let start = LocalCalendar.today(in: nil).adding(days: -4).description
            let batch = [
                Self.mutation("plans", planID, data: Self.plan("Offline plan")),
                Self.mutation("workoutLogs", logID, data: Self.log()),
                Self.mutation("cycleLogs", periodID, data: ["startDate": start, "flow": "medium"]),
                Self.mutation("preferences", "profile", data: ["fitnessLevel": "intermediate", "goals": ["buildStrength"]]),
            ]
            let first = try await Self.push(client, token, batch)
            #expect(first.map { $0["status"] as? String } == ["applied", "applied", "applied", "applied"])
            #expect(first.map { $0["version"] as? Int } == [1, 1, 1, 1])

            // The records are there through REST, shaped by the same rules (the log got the workout's title).
            let plan = try json(try await client.json(.get, "/v1/plans/\(planID)", token: token))
            #expect(plan["name"] as? String == "Offline plan")
            #expect(plan["version"] as? Int == 1)
            let history = try json(try await client.json(.get, "/v1/history", token: token))["items"] as? [[String: Any]] ?? []
            #expect(history.map { $0["id"] as? String } == [logID.lowercased()])
            #expect(history.first?["workoutTitle"] as? String == CatalogTests.fixture[0].title)
            #expect(try json(try await client.json(.get, "/v1/me", token: token))["fitnessLevel"] as? String == "intermediate")

            // The same batch again: the same results, and the feed and data are unchanged.
            let feed = try await SyncTests.pull(client, token)
            let again = try await Self.push(client, token, batch)
            #expect(NSArray(array: again).isEqual(to: first))
            let feedAgain = try await SyncTests.pull(client, token)
            #expect(feedAgain["cursor"] as? String == feed["cursor"] as? String)
            #expect(SyncTests.changes(feedAgain).count == 4)
            #expect((try json(try await client.json(.get, "/v1/history", token: token))["items"] as? [Any])?.count == 1)
            // The feed carries the client's updatedAt.
            #expect(SyncTests.changes(feedAgain).first?["updatedAt"] as? String == "2026-11-20T10:00:00Z")
        }
    }

    /// A push writes its rows a table at a time (``BatchingDatabase``), and the outcome is still that of writing them one
    /// after the other: a record written twice keeps its second version, one deleted after being written is gone, a plan
    /// between them is there.
    @Test(arguments: TestEngines.all)
    func writesInOnePushLandInTheirOrder(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            let token = try await client.signUp().accessToken
            let (kept, dropped, planID) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
            let results = try await Self.push(client, token, [
                Self.mutation("workoutLogs", kept, data: Self.log(minutes: 30)),
                Self.mutation("workoutLogs", dropped, data: Self.log(minutes: 20)),
                Self.mutation("plans", planID, data: Self.plan("Between")),
                Self.mutation("workoutLogs", kept, base: 1, at: "2026-11-20T11:00:00Z", data: Self.log(minutes: 45)),
                Self.mutation("workoutLogs", dropped, op: "delete", base: 1, at: "2026-11-20T11:00:00Z"),
            ])
            #expect(results.map { $0["status"] as? String } == ["applied", "applied", "applied", "applied", "applied"])
            #expect(results.map { $0["version"] as? Int } == [1, 1, 1, 2, 2])
            let history = try json(try await client.json(.get, "/v1/history", token: token))["items"] as? [[String: Any]] ?? []
            #expect(history.map { $0["id"] as? String } == [kept])
            #expect(history.first?["duration"] as? Int == 45)
            #expect(try json(try await client.json(.get, "/v1/plans/\(planID)", token: token))["name"] as? String == "Between")
        }
    }

    @Test(arguments: TestEngines.all)
    func oneBadMutationDoesNotRejectTheOthers(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            let token = try await client.signUp().accessToken
            let start = LocalCalendar.today(in: nil).adding(days: -2).description
            let future = LocalCalendar.today(in: nil).adding(days: 3).description
            var noName = Self.plan("x")
            noName["name"] = "  "
            let results = try await Self.push(client, token, [
                Self.mutation("cycleLogs", UUID().uuidString, data: ["startDate": start]),
                Self.mutation("plans", UUID().uuidString, data: noName),
                Self.mutation("workoutLogs", UUID().uuidString, data: Self.log(UUID().uuidString, minutes: 0)),
                Self.mutation("plans", "not-a-uuid", data: Self.plan("x")),
                Self.mutation("preferences", "profile", op: "delete"),
                Self.mutation("cycleLogs", UUID().uuidString, data: ["startDate": start]),  // same day as the first
                Self.mutation("cycleLogs", UUID().uuidString, data: ["startDate": future]),
                Self.mutation("workoutLogs", UUID().uuidString, data: ["workoutId": Self.workout, "duration": 20]),
                Self.mutation("plans", UUID().uuidString),
                Self.mutation("preferences", "profile", data: ["timeZone": "Mars/Olympus", "averageCycleLength": 90]),
                Self.mutation("workoutLogs", UUID().uuidString, data: Self.log()),
            ])
            #expect(results.map { $0["status"] as? String } == [
                "applied", "rejected", "rejected", "rejected", "rejected", "rejected", "rejected", "rejected", "rejected", "rejected", "applied",
            ])
            #expect(Self.fields(results[1]) == ["mutations[1].data.name"])
            #expect(Set(Self.fields(results[2])) == ["mutations[2].data.workoutId", "mutations[2].data.duration"])
            #expect(Self.fields(results[3]) == ["mutations[3].id"])
            #expect(Self.fields(results[4]) == ["mutations[4].op"])
            #expect(problemCode(in: results[5]) == .periodExists)
            #expect((results[5]["problem"] as? [String: Any])?["status"] as? Int == 409)
            #expect(Self.fields(results[6]) == ["mutations[6].data.startDate"])
            #expect(Self.fields(results[7]) == ["mutations[7].data.completedAt"])
            #expect(Self.fields(results[8]) == ["mutations[8].data"])
            #expect(Set(Self.fields(results[9])) == ["mutations[9].data.timeZone", "mutations[9].data.averageCycleLength"])
            // Nothing rejected was written.
            #expect(SyncTests.changes(try await SyncTests.pull(client, token)).map { $0["collection"] as? String } == ["cycleLogs", "workoutLogs"])
        }
    }

    @Test(arguments: TestEngines.all)
    func plansAreLastWriterWinsByUpdatedAt(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            let token = try await client.signUp().accessToken
            let id = UUID().uuidString.lowercased()
            _ = try await Self.push(client, token, [Self.mutation("plans", id, at: "2026-11-20T10:00:00Z", data: Self.plan("Original"))])
            // Two devices edit version 1 offline. The later edit wins whichever arrives first.
            let phone = try await Self.push(client, token, [Self.mutation("plans", id, base: 1, at: "2026-11-20T10:10:00Z", data: Self.plan("Phone"))])
            #expect(phone[0]["status"] as? String == "applied")
            #expect(phone[0]["version"] as? Int == 2)
            let watch = try await Self.push(client, token, [Self.mutation("plans", id, base: 1, at: "2026-11-20T10:05:00Z", data: Self.plan("Watch"))])
            #expect(watch[0]["status"] as? String == "conflict")
            #expect(watch[0]["resolution"] as? String == "serverWins")
            #expect(watch[0]["version"] as? Int == 2)
            let kept = try #require(watch[0]["serverRecord"] as? [String: Any])
            #expect((kept["data"] as? [String: Any])?["name"] as? String == "Phone")
            #expect(kept["version"] as? Int == 2)
            // A later stale edit wins and is reported as such.
            let tablet = try await Self.push(client, token, [Self.mutation("plans", id, base: 1, at: "2026-11-20T10:20:00Z", data: Self.plan("Tablet"))])
            #expect(tablet[0]["status"] as? String == "conflict")
            #expect(tablet[0]["resolution"] as? String == "clientWins")
            #expect(tablet[0]["version"] as? Int == 3)
            #expect(((tablet[0]["serverRecord"] as? [String: Any])?["data"] as? [String: Any])?["name"] as? String == "Tablet")
            // A tie keeps the server's copy.
            let tie = try await Self.push(client, token, [Self.mutation("plans", id, base: 2, at: "2026-11-20T10:20:00Z", data: Self.plan("Tie"))])
            #expect(tie[0]["resolution"] as? String == "serverWins")
            // A stale delete older than the last edit loses: the plan stays.
            let delete = try await Self.push(client, token, [Self.mutation("plans", id, op: "delete", base: 1, at: "2026-11-20T10:15:00Z")])
            #expect(delete[0]["resolution"] as? String == "serverWins")
            #expect(try await client.json(.get, "/v1/plans/\(id)", token: token).status == .ok)
            // A delete based on the current version applies; deleting again changes nothing.
            let current = try await Self.push(client, token, [Self.mutation("plans", id, op: "delete", base: 3, at: "2026-11-20T10:30:00Z")])
            #expect(current[0]["status"] as? String == "applied")
            #expect(current[0]["version"] as? Int == 4)
            let twice = try await Self.push(client, token, [Self.mutation("plans", id, op: "delete", base: 3, at: "2026-11-20T10:31:00Z")])
            #expect(twice[0]["status"] as? String == "applied")
            #expect(twice[0]["version"] as? Int == 4)
            #expect(try await client.json(.get, "/v1/plans/\(id)", token: token).status == .notFound)
            // A REST edit is stamped with the server's clock: an offline edit from before it loses.
            let rest = try await Self.push(client, token, [Self.mutation("plans", id, base: 4, at: "2026-11-20T11:00:00Z", data: Self.plan("Back"))])
            #expect(rest[0]["status"] as? String == "applied")
            try await client.json(.put, "/v1/plans/\(id)", body: Self.plan("Web"), token: token)
            let late = try await Self.push(client, token, [Self.mutation("plans", id, base: 5, at: "2026-11-20T12:00:00Z", data: Self.plan("Offline"))])
            #expect(late[0]["resolution"] as? String == "serverWins")
            #expect(try json(try await client.json(.get, "/v1/plans/\(id)", token: token))["name"] as? String == "Web")
        }
    }

    @Test(arguments: TestEngines.all)
    func workoutLogsFromTwoDevicesBothSurvive(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            let token = try await client.signUp().accessToken
            let phoneLog = UUID().uuidString.lowercased()
            let watchLog = UUID().uuidString.lowercased()
            _ = try await Self.push(client, token, [Self.mutation("workoutLogs", phoneLog, data: Self.log())])
            _ = try await Self.push(client, token, [Self.mutation("workoutLogs", watchLog, data: Self.log(Self.otherWorkout, minutes: 45))])
            // A device that never saw a log cannot erase or overwrite it, however late its clock says it acted.
            let erase = try await Self.push(client, token, [
                Self.mutation("workoutLogs", phoneLog, op: "delete", at: "2026-11-21T10:00:00Z"),
                Self.mutation("workoutLogs", watchLog, base: nil, at: "2026-11-21T10:00:00Z", data: Self.log(minutes: 5)),
            ])
            #expect(erase.map { $0["resolution"] as? String } == ["serverWins", "serverWins"])
            #expect(((erase[1]["serverRecord"] as? [String: Any])?["data"] as? [String: Any])?["duration"] as? Int == 45)
            let history = try json(try await client.json(.get, "/v1/history", token: token))["items"] as? [[String: Any]] ?? []
            #expect(Set(history.compactMap { $0["id"] as? String }) == [phoneLog, watchLog])
            // The device that has the current version may delete it.
            let delete = try await Self.push(client, token, [Self.mutation("workoutLogs", phoneLog, op: "delete", base: 1)])
            #expect(delete[0]["status"] as? String == "applied")
            #expect((try json(try await client.json(.get, "/v1/history", token: token))["items"] as? [Any])?.count == 1)
        }
    }

    /// One record changed several times in one push: each mutation sees the one before it (what the push read of its
    /// records up front is kept up to date by its own writes).
    @Test(arguments: TestEngines.all)
    func aRecordChangedSeveralTimesInOnePushTakesEachChangeInTurn(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            let token = try await client.signUp().accessToken
            let id = UUID().uuidString.lowercased()
            let results = try await Self.push(client, token, [
                Self.mutation("plans", id, data: Self.plan("First")),
                Self.mutation("plans", id, base: 1, at: "2026-11-20T10:01:00Z", data: Self.plan("Second")),
                // An edit of an older version, written later: plans are last-writer-wins, so it is applied as a conflict.
                Self.mutation("plans", id, base: 1, at: "2026-11-20T10:02:00Z", data: Self.plan("Stale")),
                Self.mutation("plans", id, op: "delete", base: 3, at: "2026-11-20T10:03:00Z"),
                Self.mutation("plans", id, base: 4, at: "2026-11-20T10:04:00Z", data: Self.plan("Again")),
            ])
            #expect(results.map { $0["status"] as? String } == ["applied", "applied", "conflict", "applied", "applied"])
            #expect(results[2]["resolution"] as? String == "clientWins")
            #expect(results.map { $0["version"] as? Int } == [1, 2, 3, 4, 5])
            let plan = try json(try await client.json(.get, "/v1/plans/\(id)", token: token))
            #expect(plan["name"] as? String == "Again")
            // The feed holds the record once, at its last version (the push keeps its entries and writes the latest).
            let changes = SyncTests.changes(try await SyncTests.pull(client, token)).filter { $0["id"] as? String == id }
            #expect(changes.map { $0["version"] as? Int } == [5] && changes.first?["deleted"] as? Bool == false)
        }
    }

    /// Every collection with client-chosen ids: another user's record is `id_taken` for an edit and a delete, and
    /// stays as its owner left it.
    @Test(arguments: TestEngines.all)
    func noCollectionLetsAnotherUserOverwriteARecord(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            let owner = try await client.signUp().accessToken
            let intruder = try await client.signUp().accessToken
            let start = LocalCalendar.today(in: nil).adding(days: -4).description
            let records: [(collection: String, id: String, mine: [String: Any], theirs: [String: Any])] = [
                ("plans", UUID().uuidString.lowercased(), Self.plan("Mine"), Self.plan("Theirs")),
                ("workoutLogs", UUID().uuidString.lowercased(), Self.log(minutes: 30), Self.log(minutes: 99)),
                ("cycleLogs", UUID().uuidString.lowercased(), ["startDate": start, "flow": "medium"], ["startDate": start, "flow": "heavy"]),
            ]
            let created = try await Self.push(client, owner, records.map { Self.mutation($0.collection, $0.id, data: $0.mine) })
            #expect(created.map { $0["status"] as? String } == ["applied", "applied", "applied"])
            let edits = try await Self.push(client, intruder, records.map {
                Self.mutation($0.collection, $0.id, base: 1, at: "2030-01-01T00:00:00Z", data: $0.theirs)
            })
            #expect(edits.map { problemCode(in: $0) } == [.idTaken, .idTaken, .idTaken])
            let deletes = try await Self.push(client, intruder, records.map { Self.mutation($0.collection, $0.id, op: "delete", base: 1) })
            #expect(deletes.map { problemCode(in: $0) } == [.idTaken, .idTaken, .idTaken])
            // The owner's records are as they were, and nothing reached the intruder's feed.
            let feed = SyncTests.changes(try await SyncTests.pull(client, owner))
            for record in records {
                let change = feed.first { $0["id"] as? String == record.id }
                #expect(change?["version"] as? Int == 1, "\(record.collection)")
                #expect(change?["deleted"] as? Bool != true, "\(record.collection)")
            }
            #expect(try json(try await client.json(.get, "/v1/plans/\(records[0].id)", token: owner))["name"] as? String == "Mine")
            let history = try json(try await client.json(.get, "/v1/history", token: owner))["items"] as? [[String: Any]] ?? []
            #expect(history.first?["duration"] as? Int == 30)
            #expect(SyncTests.changes(try await SyncTests.pull(client, intruder)).isEmpty)
        }
    }

    /// Two users pushing a new record under the same id at the same moment: one of them gets it, the other `id_taken`,
    /// and the record holds the winner's content under the winner's account (the owner check and the write are one
    /// statement, so the loser's write cannot land on the winner's row).
    @Test(arguments: TestEngines.all)
    func concurrentFirstWritesOfOneIdNeverCrossAccounts(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            for round in 0..<10 {
                // New accounts each round: a free account keeps one plan.
                let ana = try await client.signUp().accessToken
                let bea = try await client.signUp().accessToken
                let id = UUID().uuidString.lowercased()
                let collection = ["plans", "workoutLogs"][round % 2]
                async let first = Self.push(client, ana, [Self.mutation(collection, id, data: collection == "plans" ? Self.plan("Ana's") : Self.log(minutes: 11))])
                async let second = Self.push(client, bea, [Self.mutation(collection, id, data: collection == "plans" ? Self.plan("Bea's") : Self.log(minutes: 22))])
                let (a, b) = try await (first, second)
                let statuses = [a[0]["status"] as? String, b[0]["status"] as? String]
                #expect(statuses.sorted { ($0 ?? "") < ($1 ?? "") } == ["applied", "rejected"], "round \(round): \(a) \(b)")
                let (winner, expected) = statuses[0] == "applied" ? (ana, collection == "plans" ? "Ana's" : "11") : (bea, collection == "plans" ? "Bea's" : "22")
                let loser = winner == ana ? bea : ana
                if collection == "plans" {
                    #expect(try json(try await client.json(.get, "/v1/plans/\(id)", token: winner))["name"] as? String == expected)
                    #expect(try await client.json(.get, "/v1/plans/\(id)", token: loser).status == .notFound)
                } else {
                    let items = try json(try await client.json(.get, "/v1/history", token: winner))["items"] as? [[String: Any]] ?? []
                    #expect(items.first { $0["id"] as? String == id }.map { "\($0["duration"] ?? "")" } == expected)
                    let theirs = try json(try await client.json(.get, "/v1/history", token: loser))["items"] as? [[String: Any]] ?? []
                    #expect(theirs.contains { $0["id"] as? String == id } == false)
                }
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func anotherUsersRecordCannotBeTouched(engine: DatabaseEngine) async throws {
        try await Self.withSyncApp(engine) { client in
            let owner = try await client.signUp().accessToken
            let intruder = try await client.signUp().accessToken
            let plan = try json(try await client.json(.post, "/v1/plans", body: Self.plan("Mine"), token: owner))
            let id = try #require(plan["id"] as? String)
            let results = try await Self.push(client, intruder, [
                Self.mutation("plans", id, base: 1, at: "2030-01-01T00:00:00Z", data: Self.plan("Theirs")),
                Self.mutation("plans", id, op: "delete", base: 1),
            ])
            #expect(results.map { problemCode(in: $0) } == [.idTaken, .idTaken])
            #expect(Self.fields(results[0]) == ["mutations[0].id"])
            let after = try json(try await client.json(.get, "/v1/plans/\(id)", token: owner))
            #expect(after["name"] as? String == "Mine")
            #expect(after["version"] as? Int == 1)
            #expect(SyncTests.changes(try await SyncTests.pull(client, intruder)).isEmpty)
            // A mutation id is per user: the owner's own mutation with the intruder's id is applied, not replayed.
            let reused = try await Self.push(client, owner, [
                Self.mutation("plans", id, base: 1, at: "2030-01-01T00:00:00Z", data: Self.plan("Renamed"), mutationID: "shared-id")
            ])
            let other = try await Self.push(client, intruder, [Self.mutation("plans", id, op: "delete", base: 2, mutationID: "shared-id")])
            #expect(reused[0]["status"] as? String == "applied")
            #expect(other[0]["status"] as? String == "rejected")
        }
    }

    @Test func futureTimestampsCountAsNowAndOversizedPushesAreRefused() async throws {
        try await Self.withSyncApp(.sqlite) { client in
            let token = try await client.signUp().accessToken
            let id = UUID().uuidString.lowercased()
            _ = try await Self.push(client, token, [Self.mutation("plans", id, at: "2099-01-01T00:00:00Z", data: Self.plan("Skewed clock"))])
            let stamped = try #require(SyncTests.changes(try await SyncTests.pull(client, token)).first?["updatedAt"] as? String)
            #expect(stamped < "2099")
            // A device with a correct clock editing afterwards, without having seen that version, still wins.
            let fixed = try await Self.push(client, token, [
                Self.mutation("plans", id, at: Date.now.addingTimeInterval(1).formatted(.iso8601), data: Self.plan("Correct clock"))
            ])
            #expect(fixed[0]["resolution"] as? String == "clientWins")

            let tooMany = (0...SyncPusher.maximumMutations).map { _ in Self.mutation("plans", UUID().uuidString, data: Self.plan("x")) }
            let problem = try expectProblem(try await client.json(.post, "/v1/sync/push", body: ["mutations": tooMany], token: token), .invalidRequest)
            #expect((problem["errors"] as? [[String: Any]])?.first?["field"] as? String == "mutations")
            let malformed = try expectProblem(
                try await client.json(.post, "/v1/sync/push", body: ["mutations": [["mutationId": "m", "collection": "plans", "id": id]]], token: token),
                .invalidRequest
            )
            #expect(((malformed["errors"] as? [[String: Any]])?.first?["field"] as? String)?.hasPrefix("mutations[0].") == true)
            let unknown = try expectProblem(
                try await client.json(.post, "/v1/sync/push", body: ["mutations": [Self.mutation("steps", id, data: [:])]], token: token),
                .invalidRequest
            )
            #expect(((unknown["errors"] as? [[String: Any]])?.first?["field"] as? String) == "mutations[0].collection")
        }
    }
}

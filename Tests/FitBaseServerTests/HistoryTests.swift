import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// Workout history, local days and streaks in awkward time zones, and statistics.
@Suite struct HistoryTests {
    private func instant(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    @Test(arguments: [
        // UTC+5:30: 19:00Z is already past midnight.
        ("Asia/Kolkata", "2026-03-01T18:29:00Z", "2026-03-01"), ("Asia/Kolkata", "2026-03-01T18:30:00Z", "2026-03-02"),
        // UTC+5:45.
        ("Asia/Kathmandu", "2026-03-01T18:14:00Z", "2026-03-01"), ("Asia/Kathmandu", "2026-03-01T18:15:00Z", "2026-03-02"),
        // UTC−3:30 (Newfoundland standard time).
        ("America/St_Johns", "2026-01-10T03:29:00Z", "2026-01-09"), ("America/St_Johns", "2026-01-10T03:30:00Z", "2026-01-10"),
        // Around New York's spring-forward night (EST −5 → EDT −4 on 2026-03-08).
        ("America/New_York", "2026-03-08T04:59:00Z", "2026-03-07"), ("America/New_York", "2026-03-09T03:59:00Z", "2026-03-08"),
        ("America/New_York", "2026-03-09T04:00:00Z", "2026-03-09"),
    ])
    func instantsFallOnTheUsersLocalDay(zone: String, instant text: String, day: String) {
        #expect(LocalCalendar.day(of: instant(text), in: zone).description == day)
    }

    @Test func streaksSpanDaylightSavingChanges() {
        // 23:30 local on four consecutive evenings around each change in New York: the 23- and 25-hour days break nothing.
        for evenings in [
            ["2026-03-07T04:30:00Z", "2026-03-08T04:30:00Z", "2026-03-09T03:30:00Z", "2026-03-10T03:30:00Z"],
            ["2026-10-31T03:30:00Z", "2026-11-01T03:30:00Z", "2026-11-02T04:30:00Z", "2026-11-03T04:30:00Z"],
        ] {
            let days = Set(evenings.map { LocalCalendar.day(of: instant($0), in: "America/New_York") })
            #expect(days.count == 4)
            #expect(WorkoutStreaks.longest(days: days) == 4)
        }
    }

    @Test(arguments: TestEngines.all)
    func loggingListingStatsAndDeletion(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let database = app.database
            let yoga = CatalogTests.fixture[0], strength = CatalogTests.fixture[2]
            try await CatalogImporter.importCatalog(([yoga, strength], []), into: database, now: .storageNow)

            let account = try await client.signUp()
            try await client.json(.patch, "/v1/me", body: ["timeZone": "Asia/Kolkata"], token: account.accessToken)
            let today = LocalCalendar.today(in: "Asia/Kolkata")
            try await client.json(.post, "/v1/cycle/periods", body: ["startDate": today.adding(days: -3).description], token: account.accessToken)

            // Three local days in a row ending today (this time of day, a minute ago), today twice.
            var logged: [String] = []
            for (back, workout, energy) in [(2, yoga, (2, 4)), (1, strength, (3, 4)), (0, yoga, (3, 3)), (0, strength, (2, 5))] {
                let day = today.adding(days: -back)
                let response = try await client.json(.post, "/v1/history", body: [
                    "workoutId": workout.id.description,
                    "completedAt": Date.now.addingTimeInterval(-60 - Double(back) * 86_400).formatted(.iso8601), "duration": workout.durationMinutes,
                    "rating": 4, "energyBefore": energy.0, "energyAfter": energy.1,
                ], token: account.accessToken)
                #expect(response.status == .created)
                let body = try json(response)
                #expect(body["localDate"] as? String == day.description)
                #expect(body["cycleDay"] as? Int == 4 - back)
                #expect(body["cyclePhase"] as? String == "menstrual")
                logged.append(try #require(body["id"] as? String))
            }

            // The breakdowns are the pro tier's analytics (FeatureGatingTests checks the 402 without it).
            try await app.testDatabase.grant(.pro, toUser: account.id)
            let stats = try json(try await client.json(.get, "/v1/history/stats?detail=full", token: account.accessToken))
            #expect(stats["totalWorkouts"] as? Int == 4)
            #expect(stats["totalMinutes"] as? Int == 30 + 40 + 30 + 40)
            #expect(stats["currentStreak"] as? Int == 3)
            #expect(stats["longestStreak"] as? Int == 3)
            #expect(stats["byType"] as? [String: Int] == ["yoga": 2, "strength": 2])
            #expect(stats["byPhase"] as? [String: Int] == ["menstrual": 4])
            #expect((stats["energyChangeByPhase"] as? [String: Double])?["menstrual"] == 1.5)
            let weekly = try #require(stats["weekly"] as? [[String: Any]])
            #expect(weekly.count == 12)
            #expect(weekly.reduce(0) { $0 + ($1["workouts"] as? Int ?? 0) } == 4)

            let page = try json(try await client.json(.get, "/v1/history?limit=3&from=\(today.adding(days: -1))", token: account.accessToken))
            #expect((page["items"] as? [Any])?.count == 3)
            #expect(page["nextCursor"] == nil)

            let other = try await client.signUp()
            #expect(try await client.json(.delete, "/v1/history/\(logged[0])", token: other.accessToken).status == .notFound)
            #expect(try await client.json(.delete, "/v1/history/\(logged[0])", token: account.accessToken).status == .noContent)
            let after = try json(try await client.json(.get, "/v1/history/stats", token: account.accessToken))
            #expect(after["currentStreak"] as? Int == 2)
            #expect((try json(try await client.json(.get, "/v1/history/stats", token: other.accessToken)))["totalWorkouts"] as? Int == 0)
        }
    }

    /// A log with no private field is stored with nothing to open (an empty ciphertext) and reads back as it was
    /// written; one with private fields is sealed as before, and both read back alike in every listing.
    @Test(arguments: TestEngines.all)
    func aLogWithNoPrivateFieldSealsNothingAndReadsBackTheSame(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let yoga = CatalogTests.fixture[0]
            try await CatalogImporter.importCatalog(([yoga], []), into: app.database, now: .storageNow)
            let account = try await client.signUp()
            let marker = "NOTE\(UUID().uuidString.prefix(8))"
            let plain = try json(try await client.json(.post, "/v1/history", body: [
                "workoutId": yoga.id.description, "completedAt": "2026-11-20T10:00:00Z", "duration": 30, "rating": 4,
            ], token: account.accessToken))
            let private_ = try json(try await client.json(.post, "/v1/history", body: [
                "workoutId": yoga.id.description, "completedAt": "2026-11-21T10:00:00Z", "duration": 30, "energyBefore": 2, "notes": marker,
            ], token: account.accessToken))
            #expect(plain["notes"] == nil && plain["energyBefore"] == nil && plain["rating"] as? Int == 4)
            #expect(private_["notes"] as? String == marker && private_["energyBefore"] as? Int == 2)

            let rows = try await app.database.withConnection { db in
                try await db.select().columns("id", "key_id", "sealed").from("workout_logs").all().map {
                    (id: try $0.decode(column: "id", as: UUID.self).lowercasedString, keyID: try $0.decode(column: "key_id", as: String?.self),
                     sealed: try $0.decode(column: "sealed", as: Data?.self))
                }
            }
            let plainRow = try #require(rows.first { $0.id == plain["id"] as? String })
            let privateRow = try #require(rows.first { $0.id == private_["id"] as? String })
            #expect(plainRow.sealed == Data() && plainRow.keyID != nil)
            #expect((privateRow.sealed?.count ?? 0) > 28 && privateRow.keyID == plainRow.keyID)
            #expect(privateRow.sealed.map { String(decoding: $0, as: UTF8.self).contains(marker) } == false)

            let listed = try #require(try json(try await client.json(.get, "/v1/history", token: account.accessToken))["items"] as? [[String: Any]])
            #expect(listed.count == 2)
            #expect(listed.first?["notes"] as? String == marker && listed.first?["energyBefore"] as? Int == 2)
            #expect(listed.last?["id"] as? String == plain["id"] as? String)
            #expect(listed.last?["notes"] == nil && listed.last?["energyBefore"] == nil && listed.last?["rating"] as? Int == 4)
            let pulled = try json(try await client.json(.get, "/v1/sync/changes", token: account.accessToken))["changes"] as? [[String: Any]] ?? []
            let pulledPlain = pulled.first { $0["id"] as? String == plain["id"] as? String }?["data"] as? [String: Any]
            #expect(pulledPlain?["rating"] as? Int == 4 && pulledPlain?["notes"] == nil)
        }
    }

    /// Integers in a page are written as the encoder writes them, at every size and sign.
    @Test func integersAreWrittenAsTheEncoderWritesThem() throws {
        var generator = SystemRandomNumberGenerator()
        let values = [0, 1, 9, 10, 99, 100, -1, -9, -10, Int.max, Int.min, Int.max - 1, Int.min + 1] + (0..<200).map { _ in Int.random(in: .min ... .max, using: &generator) }
        for value in values {
            var body = ByteBuffer()
            HistoryJSON.write(decimal: value, to: &body)
            #expect(String(buffer: body) == String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
        }
    }

    @Test func badLogsAreRefusedNamingTheField() async throws {
        try await withApp(.sqlite) { client, _ in
            let account = try await client.signUp()
            let response = try await client.json(.post, "/v1/history", body: [
                "workoutId": UUID().uuidString, "completedAt": "2999-01-01T00:00:00Z", "duration": 0, "rating": 6,
            ], token: account.accessToken)
            #expect(response.status == .badRequest)
            let fields = try #require(json(response)["errors"] as? [[String: String]]).compactMap { $0["field"] }
            #expect(Set(fields) == ["workoutId", "completedAt", "duration", "rating"])
            #expect(try await client.json(.get, "/v1/history?from=yesterday", token: account.accessToken).status == .badRequest)
        }
    }
}

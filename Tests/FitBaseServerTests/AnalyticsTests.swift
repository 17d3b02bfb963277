import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// `POST /v1/analytics/events`: product events in, health data refused, counted per day, kept for a while, gone with
/// the account.
@Suite struct AnalyticsTests {
    static func consent(_ client: any TestClientProtocol, _ token: String, granted: Bool = true) async throws {
        let response = try await client.json(.post, "/v1/me/consents", body: ["kind": "analytics", "version": "2026-11", "granted": granted], token: token)
        try #require(response.status == .created)
    }

    static func event(_ name: String, id: String = UUID().uuidString, at date: Date = .now, _ properties: [String: Any]? = nil) -> [String: Any] {
        var event: [String: Any] = ["id": id, "name": name, "occurredAt": date.formatted(.iso8601)]
        if let properties { event["properties"] = properties }
        return event
    }

    static func send(_ client: any TestClientProtocol, _ token: String, _ events: [[String: Any]]) async throws -> TestResponse {
        try await client.json(.post, "/v1/analytics/events", body: ["events": events], token: token)
    }

    static func storedEvents(_ app: TestApp) async throws -> Int {
        try await app.database.withConnection { db in
            try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("analytics_events").first()?.decode(column: "n", as: Int.self) ?? 0
        }
    }

    @Test(arguments: TestEngines.all)
    func storesABatchOnceAndCountsItPerDay(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let user = try await client.signUp()
            try await Self.consent(client, user.accessToken)
            let yesterday = Date.now.addingTimeInterval(-86_400)
            let batch = [
                Self.event("screen_view", ["screen": "library"]), Self.event("screen_view", ["screen": "home"]),
                Self.event("screen_view", at: yesterday, ["screen": "home"]),
                Self.event("workout_started", ["workout_id": UUID().uuidString.lowercased(), "resumed": false, "set_count": 3]),
                // Naming which chart was opened is a category, not a reading.
                Self.event("health_chart_viewed", ["metric": "heartRate"]),
            ]
            let sent = try await Self.send(client, user.accessToken, batch)
            #expect(sent.status == .ok)
            #expect(try json(sent)["accepted"] as? Int == 5)
            #expect(try json(sent)["duplicates"] as? Int == 0)
            // The same batch again (an app that lost the answer): nothing counted twice.
            let again = try json(try await Self.send(client, user.accessToken, batch))
            #expect(again["accepted"] as? Int == 0)
            #expect(again["duplicates"] as? Int == 5)

            let today = CalendarDay(.now, in: .gmt)
            let daily = try await AnalyticsStore(database: app.database).dailyCounts(from: today.adding(days: -1), to: today)
            let expected: [AnalyticsStore.DailyCount] = [
                .init(day: CalendarDay(yesterday, in: .gmt), name: "screen_view", count: 1),
                .init(day: today, name: "health_chart_viewed", count: 1),
                .init(day: today, name: "screen_view", count: 2),
                .init(day: today, name: "workout_started", count: 1),
            ].sorted { ($0.day, $0.name) < ($1.day, $1.name) }
            #expect(daily == expected)

            // Another user's identical ids are theirs: stored, not duplicates.
            let other = try await client.signUp()
            try await Self.consent(client, other.accessToken)
            #expect(try json(try await Self.send(client, other.accessToken, batch))["accepted"] as? Int == 5)
        }
    }

    @Test(arguments: TestEngines.all)
    func analyticsRejectsAHealthValuedProperty(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let user = try await client.signUp()
            try await Self.consent(client, user.accessToken)
            let refused: [(properties: [String: Any], field: String)] = [
                (["resting_heart_rate": 58], "resting_heart_rate"),
                (["heartRate": "72 bpm"], "heartRate"),
                (["daily_steps": 8000], "daily_steps"),
                (["sleep_minutes": 431], "sleep_minutes"),
                (["systolic": 120], "systolic"),
                (["oxygenSaturation": 97.5], "oxygenSaturation"),
                (["asleepDeep": 80], "asleepDeep"),
                (["lh_test": "positive"], "lh_test"),
                (["cycle_day": 14], "cycle_day"),
                (["phase": "follicular"], "phase"),
                (["screen": "luteal"], "screen"),
                (["weight": 61.2], "weight"),
            ]
            for (properties, field) in refused {
                // One healthy event before it: the batch is refused whole.
                let response = try await Self.send(client, user.accessToken, [Self.event("screen_view", ["screen": "home"]), Self.event("check_in", properties)])
                #expect(response.status == .badRequest, "\(properties)")
                let problem = try expectProblem(response, .validationFailed)
                let fields = (problem["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String }
                #expect(fields == ["events[1].properties.\(field)"], "\(properties)")
            }
            #expect(try await Self.storedEvents(app) == 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func refusesWhatIsNotAnEventNamingTheField(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let user = try await client.signUp()
            try await Self.consent(client, user.accessToken)
            let id = UUID().uuidString
            let cases: [(event: [String: Any], field: String)] = [
                (Self.event("Screen View"), "events[0].name"),
                (Self.event("x", id: "not-a-uuid"), "events[0].id"),
                (Self.event("old_news", at: Date.now.addingTimeInterval(-40 * 86_400)), "events[0].occurredAt"),
                (Self.event("from_the_future", at: Date.now.addingTimeInterval(2 * 86_400)), "events[0].occurredAt"),
                (Self.event("nested", ["list": [1, 2]]), "events[0].properties.list"),
                (Self.event("nothing", ["empty": NSNull()]), "events[0].properties.empty"),
                (Self.event("long", ["note": String(repeating: "a", count: 201)]), "events[0].properties.note"),
                (Self.event("bad_key", ["2fast": true]), "events[0].properties.2fast"),
                (Self.event("many", Dictionary(uniqueKeysWithValues: (0..<21).map { ("key\($0)", $0 % 2 == 0) })), "events[0].properties"),
            ]
            for (event, field) in cases {
                let response = try await Self.send(client, user.accessToken, [event])
                #expect(response.status == .badRequest, "\(field)")
                let problem = try expectProblem(response, .validationFailed)
                #expect((problem["errors"] as? [[String: Any]])?.first?["field"] as? String == field)
            }
            let repeated = try await Self.send(client, user.accessToken, [Self.event("a", id: id), Self.event("b", id: id)])
            #expect(((try expectProblem(repeated, .validationFailed))["errors"] as? [[String: Any]])?.first?["field"] as? String == "events[1].id")
            let tooMany = try await Self.send(client, user.accessToken, (0...100).map { _ in Self.event("screen_view") })
            #expect(tooMany.status == .badRequest)
            #expect(((try expectProblem(tooMany, .invalidRequest))["errors"] as? [[String: Any]])?.first?["field"] as? String == "events")
            #expect(try await Self.storedEvents(app) == 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func needsASignedInUserWhoConsented(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            #expect(try await Self.send(client, "", [Self.event("screen_view")]).status == .unauthorized)
            let anonymous = try await client.json(.post, "/v1/analytics/events", body: ["events": [Self.event("screen_view")]])
            try expectProblem(anonymous, .authenticationRequired)
            let user = try await client.signUp()
            try expectProblem(try await Self.send(client, user.accessToken, [Self.event("screen_view")]), .consentRequired)
            try await Self.consent(client, user.accessToken)
            #expect(try await Self.send(client, user.accessToken, [Self.event("screen_view")]).status == .ok)
            try await Self.consent(client, user.accessToken, granted: false)
            #expect(try await Self.send(client, user.accessToken, [Self.event("screen_view")]).status == .forbidden)
        }
    }

    @Test(arguments: TestEngines.all)
    func eachAccountHasItsBatchesPerMinute(engine: DatabaseEngine) async throws {
        let clock = MovableClock()
        let options = TestAppOptions(clock: clock.serverClock, configure: { $0.analytics.batchesPerMinute = 2 })
        try await withApp(engine, options: options) { client, _ in
            let user = try await client.signUp()
            try await Self.consent(client, user.accessToken)
            for _ in 0..<2 { #expect(try await Self.send(client, user.accessToken, [Self.event("screen_view")]).status == .ok) }
            let limited = try await Self.send(client, user.accessToken, [Self.event("screen_view")])
            #expect(limited.status == .tooManyRequests)
            try expectProblem(limited, .rateLimited)
            #expect(limited.headers[.retryAfter] != nil)
            // Another account is not held back.
            let other = try await client.signUp()
            try await Self.consent(client, other.accessToken)
            #expect(try await Self.send(client, other.accessToken, [Self.event("screen_view")]).status == .ok)
            // A minute later the account may send again.
            clock.advance(by: 61)
            #expect(try await Self.send(client, user.accessToken, [Self.event("screen_view")]).status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func keptForTheRetentionPeriodExportedAndDeletedWithTheAccount(engine: DatabaseEngine) async throws {
        let options = TestAppOptions(configure: {
            $0.analytics.retentionDays = 7
            $0.housekeeping = (.milliseconds(20), .milliseconds(50))
        })
        try await withApp(engine, options: options) { client, app in
            let user = try await client.signUp()
            try await Self.consent(client, user.accessToken)
            let old = Date.now.addingTimeInterval(-10 * 86_400)
            #expect(try await Self.send(client, user.accessToken, [Self.event("screen_view", at: old), Self.event("plan_saved")]).status == .ok)
            // The retention service deletes the event past 7 days and keeps the other.
            #expect(await eventually { try await Self.storedEvents(app) == 1 })

            let export = try json(try await client.json(.get, "/v1/me/export", token: user.accessToken))
            let exported = (export["sections"] as? [String: Any])?["analyticsEvents"] as? [[String: Any]]
            #expect(exported?.map { $0["name"] as? String } == ["plan_saved"])

            #expect(try await client.json(.delete, "/v1/me", token: user.accessToken).status == .noContent)
            #expect(try await Self.storedEvents(app) == 0)
        }
    }
}

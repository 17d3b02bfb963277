import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// `GET /v1/plans/{planId}/progression` over HTTP, on every engine: premium only, the owner's plans only, the week
/// checked by name, and the suggestion drawn from the logs, the catalog and the cycle.
@Suite struct PlanProgressionEndpointTests {
    static let strength = CatalogTests.workout("Dumbbell Foundations", type: .strength, minutes: 30, intensity: .medium, phases: [.follicular], equipment: [.none])
    static let harder = CatalogTests.workout("Heavy Full-Body", type: .strength, minutes: 30, intensity: .high, phases: [.follicular], equipment: [.none], premium: true)
    static let lighter = CatalogTests.workout("Light & Easy Strength", type: .strength, minutes: 25, intensity: .low, phases: [.menstrual], equipment: [.none])
    static let yoga = CatalogTests.workout("Yoga for Lower Back", type: .yoga, minutes: 30, intensity: .low, phases: [.menstrual], equipment: [.none])
    static let hiit = CatalogTests.workout("Tabata Legs", type: .hiitStrength, minutes: 20, intensity: .high, phases: [.ovulatory], equipment: [.none])

    /// A plan of four weeks whose third holds today (UTC, the time zone of a profile without one): strength on
    /// Monday, yoga on Wednesday, HIIT on Friday.
    static func planBody(start: CalendarDay, weeks: Int = 4) -> [String: Any] {
        [
            "name": "Progressive block", "startDate": start.description, "daysPerWeek": 3,
            "weeklyWorkouts": (1...weeks).map { week in
                ["week": week, "days": [
                    ["day": 1, "workoutIds": [strength.id.description]], ["day": 3, "workoutIds": [yoga.id.description]],
                    ["day": 5, "workoutIds": [hiit.id.description]],
                ]] as [String: Any]
            },
        ]
    }

    static func progression(_ client: any TestClientProtocol, _ plan: String, _ query: String = "", token: String?) async throws -> TestResponse {
        try await client.json(.get, "/v1/plans/\(plan)/progression\(query)", token: token)
    }

    @Test(arguments: TestEngines.all)
    func premiumOwnersGetTheirPlansNextWeekAdjusted(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let database = app.database
            try await CatalogImporter.importCatalog(([Self.strength, Self.harder, Self.lighter, Self.yoga, Self.hiit], []), into: database, now: .storageNow)
            let today = LocalCalendar.today(in: nil)
            let start = WorkoutStreaks.weekStart(of: today).adding(days: -14)
            let owner = try await client.signUp()
            let created = try await client.json(.post, "/v1/plans", body: Self.planBody(start: start), token: owner.accessToken)
            let plan = try #require(try json(created)["id"] as? String)
            // Weeks 1 and 2 done as planned, rated 5, with good energy.
            for week in 0..<2 {
                for (workout, day) in [(Self.strength, 0), (Self.yoga, 2), (Self.hiit, 4)] {
                    let logged = try await client.json(.post, "/v1/history", body: [
                        "workoutId": workout.id.description, "completedAt": "\(start.adding(days: 7 * week + day))T10:00:00Z", "duration": workout.durationMinutes,
                        "rating": 5, "energyBefore": 4, "energyAfter": 5,
                    ], token: owner.accessToken)
                    try #require(logged.status == .created)
                }
            }

            // Free and pro: the feature is premium's.
            let free = try await Self.progression(client, plan, "?week=3", token: owner.accessToken)
            #expect(free.status.code == 402)
            #expect(try expectProblem(free, .upgradeRequired)["requiredTier"] as? String == "premium")
            try await app.testDatabase.grant(.pro, toUser: owner.id)
            #expect(try await Self.progression(client, plan, "?week=3", token: owner.accessToken).status.code == 402)
            try await app.testDatabase.grant(.premium, toUser: owner.id)

            let answer = try await Self.progression(client, plan, "?week=3", token: owner.accessToken)
            #expect(answer.status == .ok)
            let body = try json(answer)
            #expect(body["planId"] as? String == plan && body["week"] as? Int == 3)
            #expect(body["startDate"] as? String == start.adding(days: 14).description && body["endDate"] as? String == start.adding(days: 20).description)
            let summary = try #require(body["summary"] as? [String: Any])
            #expect(summary["weeks"] as? [Int] == [1, 2])
            #expect(summary["plannedSessions"] as? Int == 6 && summary["completedSessions"] as? Int == 6 && summary["completionRate"] as? Double == 1)
            #expect(summary["averageRating"] as? Double == 5 && summary["averageEnergyBefore"] as? Double == 4 && summary["averageEnergyAfter"] as? Double == 5)
            #expect(summary["fromDate"] as? String == start.adding(days: -7).description && summary["toDate"] as? String == start.adding(days: 13).description)
            #expect(summary["deload"] as? Bool == false && summary["enoughHistory"] as? Bool == true && summary["energyTrend"] as? String == "steady")
            let sessions = try #require(body["sessions"] as? [[String: Any]])
            #expect(sessions.map { $0["day"] as? Int } == [1, 3, 5])
            #expect(sessions.map { $0["action"] as? String } == ["progress", "progress", "progress"])
            // Strength steps up to the harder (premium) workout; yoga and HIIT have no variant: 10 % longer.
            #expect(sessions.map { $0["workoutId"] as? String } == [Self.harder.id.description, Self.yoga.id.description, Self.hiit.id.description])
            #expect(sessions.map { $0["suggestedDuration"] as? Int } == [30, 33, 22])
            #expect(sessions.allSatisfy { $0["phase"] == nil && ($0["reason"] as? String)?.isEmpty == false })

            // Without `week`: the week after today's.
            #expect(try json(try await Self.progression(client, plan, token: owner.accessToken))["week"] as? Int == 4)

            // A period starting this Monday: this week's days are menstrual, and the suggestion follows them.
            try #require(try await client.json(.post, "/v1/cycle/periods", body: ["startDate": start.adding(days: 14).description], token: owner.accessToken).status == .created)
            let cycled = try #require(try json(try await Self.progression(client, plan, "?week=3", token: owner.accessToken))["sessions"] as? [[String: Any]])
            #expect(cycled.map { $0["phase"] as? String } == ["menstrual", "menstrual", "menstrual"])
            #expect(cycled.map { $0["action"] as? String } == ["swap", "keep", "reduce"])
            #expect(cycled.map { $0["workoutId"] as? String } == [Self.lighter.id.description, Self.yoga.id.description, Self.hiit.id.description])
            #expect(cycled.map { $0["suggestedDuration"] as? Int } == [25, 30, 16])

            // Another user's plan is not found, whatever their tier or role.
            let other = try await client.signUp()
            try await app.testDatabase.grant(.premium, toUser: other.id)
            #expect(try await Self.progression(client, plan, "?week=3", token: other.accessToken).status == .notFound)
            let admin = try await client.signUp()
            try await UserStore(database: database).setRole(.admin, for: try #require(UserID(admin.id)), now: .storageNow)
            #expect(try await Self.progression(client, plan, "?week=3", token: admin.accessToken).status == .notFound)
            #expect(try await Self.progression(client, UUID().uuidString, token: owner.accessToken).status == .notFound)
            #expect(try await Self.progression(client, "not-a-plan", token: owner.accessToken).status == .notFound)
            #expect(try await Self.progression(client, plan, "?week=3", token: nil).status == .unauthorized)
            // An admin (on the free tier) may use every feature on their own plans.
            let adminPlan = try #require(try json(try await client.json(.post, "/v1/plans", body: Self.planBody(start: start), token: admin.accessToken))["id"] as? String)
            #expect(try await Self.progression(client, adminPlan, "?week=2", token: admin.accessToken).status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func aBadWeekIsRefusedByName(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let database = app.database
            try await CatalogImporter.importCatalog(([Self.strength, Self.yoga, Self.hiit], []), into: database, now: .storageNow)
            let owner = try await client.signUp()
            try await app.testDatabase.grant(.premium, toUser: owner.id)
            let today = LocalCalendar.today(in: nil)
            let plan = try #require(try json(try await client.json(
                .post, "/v1/plans", body: Self.planBody(start: WorkoutStreaks.weekStart(of: today).adding(days: -14)), token: owner.accessToken
            ))["id"] as? String)
            for query in ["?week=0", "?week=5", "?week=-2", "?week=53", "?week=abc", "?week=2.5"] {
                let response = try await Self.progression(client, plan, query, token: owner.accessToken)
                #expect(response.status == .badRequest, "\(query)")
                let fields = (try json(response)["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String }
                #expect(fields == ["week"], "\(query): \(String(buffer: response.body))")
            }
            try expectProblem(try await Self.progression(client, plan, "?week=5", token: owner.accessToken), .validationFailed)
            // A plan whose only week is long past has no week to suggest by default.
            let old = try #require(try json(try await client.json(
                .post, "/v1/plans", body: Self.planBody(start: today.adding(days: -60), weeks: 1), token: owner.accessToken
            ))["id"] as? String)
            let over = try await Self.progression(client, old, token: owner.accessToken)
            #expect(over.status == .badRequest)
            #expect((try json(over)["errors"] as? [[String: Any]])?.first?["field"] as? String == "week")
            #expect(try await Self.progression(client, old, "?week=1", token: owner.accessToken).status == .ok)
        }
    }
}

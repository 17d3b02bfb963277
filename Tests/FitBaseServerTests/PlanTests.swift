import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// Training plans over HTTP, on every engine.
@Suite struct PlanTests {
    @Test(arguments: TestEngines.all)
    func plansAreCreatedReplacedWithAVersionAndDeleted(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let database = app.database
            let yoga = CatalogTests.fixture[0], barre = CatalogTests.fixture[4]
            try await CatalogImporter.importCatalog(([yoga, barre], []), into: database, now: .storageNow)
            let owner = try await client.signUp()
            var body: [String: Any] = [
                "name": "Spring Block", "notes": "Three days a week", "startDate": "2026-03-02", "endDate": "2026-03-29", "daysPerWeek": 3,
                "weeklyWorkouts": [
                    ["week": 1, "days": [["day": 1, "workoutIds": [yoga.id.description]], ["day": 3, "workoutIds": [barre.id.description]]]],
                    ["week": 2, "days": [["day": 2, "workoutIds": [barre.id.description, yoga.id.description]]]],
                ],
            ]
            let created = try await client.json(.post, "/v1/plans", body: body, token: owner.accessToken)
            #expect(created.status == .created)
            let plan = try json(created)
            let id = try #require(plan["id"] as? String)
            #expect(plan["version"] as? Int == 1)
            #expect(plan["isCompleted"] as? Bool == false)

            body["isCompleted"] = true
            body["name"] = "Spring Block (done)"
            let replaced = try json(try await client.json(.put, "/v1/plans/\(id)", body: body, token: owner.accessToken))
            #expect(replaced["version"] as? Int == 2)
            #expect(replaced["createdAt"] as? String == plan["createdAt"] as? String)
            let fetched = try json(try await client.json(.get, "/v1/plans/\(id)", token: owner.accessToken))
            #expect(fetched["name"] as? String == "Spring Block (done)")
            let weeks = try #require(fetched["weeklyWorkouts"] as? [[String: Any]])
            #expect(((weeks[1]["days"] as? [[String: Any]])?.first?["workoutIds"] as? [String]) == [barre.id.description, yoga.id.description])
            #expect((try json(try await client.json(.get, "/v1/plans", token: owner.accessToken))["items"] as? [Any])?.count == 1)

            let other = try await client.signUp()
            #expect(try await client.json(.get, "/v1/plans/\(id)", token: other.accessToken).status == .notFound)
            #expect(try await client.json(.put, "/v1/plans/\(id)", body: body, token: other.accessToken).status == .notFound)
            #expect((try json(try await client.json(.get, "/v1/plans", token: other.accessToken))["items"] as? [Any])?.isEmpty == true)
            #expect(try await client.json(.delete, "/v1/plans/\(id)", token: owner.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/plans/\(id)", token: owner.accessToken).status == .notFound)
        }
    }

    @Test func badPlansNameEveryField() async throws {
        try await withApp(.sqlite) { client, _ in
            let owner = try await client.signUp()
            let response = try await client.json(.post, "/v1/plans", body: [
                "name": " ", "startDate": "2026-03-10", "endDate": "2026-03-01", "daysPerWeek": 9,
                "weeklyWorkouts": [["week": 2, "days": [["day": 8, "workoutIds": [UUID().uuidString]]]]],
            ], token: owner.accessToken)
            #expect(response.status == .badRequest)
            let fields = try #require(json(response)["errors"] as? [[String: String]]).compactMap { $0["field"] }
            #expect(Set(fields) == [
                "name", "endDate", "daysPerWeek", "weeklyWorkouts[0].week", "weeklyWorkouts[0].days[0].day",
                "weeklyWorkouts[0].days[0].workoutIds[0]",
            ])
        }
    }
    /// A schedule past the size limits is refused by its path, before any workout is looked up, on both paths that
    /// write plans (REST and sync push).
    @Test(arguments: TestEngines.all)
    func plansAreBoundedInSize(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let owner = try await client.signUp()
            let day: [String: Any] = ["day": 1, "workoutIds": (0..<11).map { _ in UUID().uuidString }]
            let week: [String: Any] = ["week": 1, "days": Array(repeating: ["day": 1, "workoutIds": [String]()], count: 8) + [day]]
            let body: [String: Any] = [
                "name": "Huge", "startDate": "2026-03-02", "daysPerWeek": 3,
                "weeklyWorkouts": [week] + (2...53).map { ["week": $0, "days": [[String: Any]]()] },
            ]
            let refused = try await client.json(.post, "/v1/plans", body: body, token: owner.accessToken)
            #expect(refused.status == .badRequest)
            let fields = try #require(json(refused)["errors"] as? [[String: String]]).compactMap { $0["field"] }
            #expect(Set(fields) == ["weeklyWorkouts", "weeklyWorkouts[0].days"])
            let overfull: [String: Any] = ["name": "Day", "startDate": "2026-03-02", "daysPerWeek": 3, "weeklyWorkouts": [["week": 1, "days": [day]]]]
            let tooMany = try await client.json(.post, "/v1/plans", body: overfull, token: owner.accessToken)
            #expect(try #require(json(tooMany)["errors"] as? [[String: String]]).compactMap { $0["field"] } == ["weeklyWorkouts[0].days[0].workoutIds"])
            let pushed = try await SyncPushTests.push(client, owner.accessToken, [SyncPushTests.mutation("plans", UUID().uuidString.lowercased(), data: overfull)])
            #expect(SyncPushTests.fields(pushed[0]) == ["mutations[0].data.weeklyWorkouts[0].days[0].workoutIds"])
        }
    }
}

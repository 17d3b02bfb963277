import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// Period logging, current phase and predictions over HTTP, on every engine.
@Suite struct CycleTests {
    let today = LocalCalendar.today(in: nil)

    @Test(arguments: TestEngines.all)
    func loggedPeriodsDriveHistoryPhaseAndPredictions(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            // Four periods 30 days apart, the last one 9 days ago.
            for back in [99, 69, 39, 9] {
                let start = today.adding(days: -back)
                let response = try await client.json(.post, "/v1/cycle/periods", body: [
                    "startDate": start.description, "endDate": start.adding(days: 4).description, "flow": "medium", "symptoms": ["cramps"],
                ], token: account.accessToken)
                #expect(response.status == .created)
            }
            let history = try json(try await client.json(.get, "/v1/cycle/history", token: account.accessToken))
            let items = try #require(history["items"] as? [[String: Any]])
            #expect(items.map { $0["cycleLength"] as? Int } == [nil, 30, 30, 30])

            let current = try json(try await client.json(.get, "/v1/cycle/current", token: account.accessToken))
            #expect(current["cycleDay"] as? Int == 10)
            #expect(current["phase"] as? String == "follicular")
            #expect(current["isLate"] as? Bool == false)

            let predictions = try json(try await client.json(.get, "/v1/cycle/predictions?days=40", token: account.accessToken))
            #expect(predictions["nextPeriodStart"] as? String == today.adding(days: 21).description)
            // No luteal phase of hers measured yet: the population's 12.4 days before the next start.
            #expect(predictions["ovulationDate"] as? String == today.adding(days: 9).description)
            #expect(predictions["ovulationSource"] as? String == "estimated")
            #expect((predictions["basis"] as? [String: Any])?["method"] as? String == "cycleHistory")
            let calendar = try #require(predictions["calendar"] as? [[String: Any]])
            #expect(calendar.count == 9 + 40)
            #expect(calendar.first?["date"] as? String == today.adding(days: -9).description)
            #expect(calendar.first?["phase"] as? String == "menstrual")
            #expect(calendar.filter { $0["predicted"] as? Bool == false }.count == 9)
            #expect(calendar[9 + 21]["phase"] as? String == "menstrual")
            #expect((predictions["basis"] as? [String: Any])?["cyclesUsed"] as? Int == 3)
        }
    }

    @Test func badPeriodsAreRefusedNamingTheField() async throws {
        try await withApp(.sqlite) { client, _ in
            let account = try await client.signUp()
            let future = try await client.json(.post, "/v1/cycle/periods", body: ["startDate": today.adding(days: 2).description], token: account.accessToken)
            #expect(try json(future)["errors"] as? [[String: String]] == [["field": "startDate", "message": "must not be in the future"]])
            let backwards = try await client.json(.post, "/v1/cycle/periods", body: [
                "startDate": today.adding(days: -3).description, "endDate": today.adding(days: -5).description,
            ], token: account.accessToken)
            #expect((try json(backwards)["errors"] as? [[String: String]])?.first?["field"] == "endDate")
            #expect(try await client.json(.post, "/v1/cycle/periods", body: ["startDate": "2026-02-30"], token: account.accessToken).status == .badRequest)
            #expect(try await client.json(.post, "/v1/cycle/periods", body: ["startDate": today.description, "flow": "torrential"], token: account.accessToken).status == .badRequest)
            #expect(try await client.json(.post, "/v1/cycle/periods", body: ["startDate": today.description], token: account.accessToken).status == .created)
            try expectProblem(try await client.json(.post, "/v1/cycle/periods", body: ["startDate": today.description], token: account.accessToken), .periodExists)
        }
    }

    @Test(arguments: TestEngines.all)
    func periodsBelongToTheirOwnerOnly(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let owner = try await client.signUp()
            let other = try await client.signUp()
            let logged = try json(try await client.json(.post, "/v1/cycle/periods", body: ["startDate": today.adding(days: -3).description], token: owner.accessToken))
            let id = try #require(logged["id"] as? String)
            #expect(try await client.json(.delete, "/v1/cycle/periods/\(id)", token: other.accessToken).status == .notFound)
            #expect(try await client.json(.put, "/v1/cycle/periods/\(id)", body: ["startDate": today.description], token: other.accessToken).status == .notFound)
            #expect(try await client.json(.get, "/v1/cycle/current", token: other.accessToken).status == .notFound)
            let updated = try await client.json(.put, "/v1/cycle/periods/\(id)", body: ["startDate": today.adding(days: -4).description, "notes": "earlier"], token: owner.accessToken)
            #expect(try json(updated)["startDate"] as? String == today.adding(days: -4).description)
            #expect(try await client.json(.delete, "/v1/cycle/periods/\(id)", token: owner.accessToken).status == .noContent)
            #expect((try json(try await client.json(.get, "/v1/cycle/history", token: owner.accessToken))["items"] as? [Any])?.isEmpty == true)
        }
    }

    /// An account holds at most 1,000 periods, so every read of them (history, predictions, each workout logged) is
    /// bounded; past that, REST and pushed periods are refused alone with `too_many_periods`.
    @Test func anAccountHoldsAtMostAThousandPeriods() async throws {
        try await withApp(.sqlite) { client, _ in
            let token = try await client.signUp().accessToken
            for batch in 0..<2 {
                let results = try await SyncPushTests.push(client, token, (0..<500).map { index in
                    SyncPushTests.mutation("cycleLogs", UUID().uuidString, data: ["startDate": today.adding(days: -(batch * 500 + index) - 1).description])
                })
                #expect(results.allSatisfy { $0["status"] as? String == "applied" })
            }
            try expectProblem(try await client.json(.post, "/v1/cycle/periods", body: ["startDate": today.description], token: token), .tooManyPeriods)
            let pushed = try await SyncPushTests.push(client, token, [SyncPushTests.mutation("cycleLogs", UUID().uuidString, data: ["startDate": today.description])])
            #expect(problemCode(in: pushed.first) == .tooManyPeriods)
            let history = try #require(try json(try await client.json(.get, "/v1/cycle/history", token: token))["items"] as? [Any])
            #expect(history.count == 1_000)
            // Editing one of them is not a new one.
            let first = try #require((history.first as? [String: Any])?["period"] as? [String: Any])
            let id = try #require(first["id"] as? String)
            #expect(try await client.json(.put, "/v1/cycle/periods/\(id)", body: ["startDate": today.adding(days: -1).description, "notes": "edited"], token: token).status == .ok)
        }
    }

    @Test func withoutLogsTheProfilesLastPeriodIsUsed() async throws {
        try await withApp(.sqlite) { client, _ in
            let account = try await client.signUp()
            try expectProblem(try await client.json(.get, "/v1/cycle/current", token: account.accessToken), .noCycleData)
            try await client.json(.patch, "/v1/me", body: ["lastPeriodStartDate": today.adding(days: -30).description, "averageCycleLength": 28], token: account.accessToken)
            let current = try json(try await client.json(.get, "/v1/cycle/current", token: account.accessToken))
            #expect(current["cycleDay"] as? Int == 31)
            #expect(current["isLate"] as? Bool == true)
            #expect(current["phase"] as? String == "luteal")
            #expect(current["confidence"] as? String == "low")
        }
    }
}

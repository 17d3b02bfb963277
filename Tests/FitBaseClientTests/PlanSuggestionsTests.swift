import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Testing

@testable import FitBaseServer

/// The SDK's typed call for a plan's progressive suggestions, against a live server.
@Suite struct PlanSuggestionsTests {
    @Test(arguments: TestEngines.all)
    func aPremiumUserGetsTheWeekAndEveryoneElseATypedProblem(engine: DatabaseEngine) async throws {
        try await SyncEngineTests.withServer(engine) { server, database, workout in
            let fitbase = FitBaseClient(serverURL: server)
            let user = try await fitbase.signUp(email: SyncEngineTests.email(), password: SyncEngineTests.password)
            let monday = WorkoutStreaks.weekStart(of: LocalCalendar.day(of: .now, in: nil)).adding(days: -7)
            let plan = try await fitbase.api.createPlan(body: .json(.init(
                name: "Three weeks", startDate: monday.description, daysPerWeek: 1,
                weeklyWorkouts: (1...3).map { .init(week: $0, days: [.init(day: 1, workoutIds: [workout.id])]) }
            ))).created.body.json
            let completedAt = try #require(ISO8601DateFormatter().date(from: "\(monday)T09:00:00Z"))
            _ = try await fitbase.api.logWorkout(body: .json(.init(workoutId: workout.id, completedAt: completedAt, duration: 20, rating: 4))).created

            func problem(_ call: () async throws(FitBaseError) -> PlanProgressionSuggestion) async -> APIProblem? {
                do {
                    _ = try await call()
                    return nil
                } catch {
                    guard case .problem(let problem) = error else { return nil }
                    return problem
                }
            }
            let planID = try #require(PlanID(plan.id))
            let upgrade = await problem { () async throws(FitBaseError) in try await fitbase.planProgression(planId: planID, week: 2) }
            #expect(upgrade?.code == .upgradeRequired && upgrade?.status == 402 && upgrade?.requiredTier == .premium)

            try await database.grant(.premium, toUser: user.id.description)
            let next = try await fitbase.planProgression(planId: planID, week: 2)
            #expect(next.week == 2 && next.planId == plan.id && next.startDate == monday.adding(days: 7).description)
            #expect(next.sessions.map(\.plannedWorkoutId) == [workout.id] && next.sessions.first?.action == .keep)
            #expect(next.summary.plannedSessions == 1 && next.summary.completedSessions == 1 && next.summary.averageRating == 4)
            #expect(next.summary.enoughHistory == false && next.summary.weeks == [1])
            // Without a week: the one after this week (the plan's second).
            #expect(try await fitbase.planProgression(planId: planID).week == 3)

            let badWeek = await problem { () async throws(FitBaseError) in try await fitbase.planProgression(planId: planID, week: 4) }
            #expect(badWeek?.code == .validationFailed && badWeek?.fieldErrors.map(\.field) == ["week"])
            let missing = await problem { () async throws(FitBaseError) in try await fitbase.planProgression(planId: PlanID()) }
            #expect(missing?.code == .notFound)
        }
    }
}

import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import Testing

/// A plan's suggested week is Core's ``PlanProgression/Suggestion`` in the contract's JSON: the SDK's answer reads as it
/// whole, and the suggestion writes every field the contract's `PlanProgression` holds but the plan's id.
@Suite struct CoreRecordContractPlansTests {
    @Test func aSuggestedWeekIsTheContractsPlanProgression() throws {
        let monday = CalendarDay("2027-01-11")!
        let suggestion = PlanProgression.Suggestion(
            week: 3, startDate: monday, endDate: monday.adding(days: 6),
            sessions: [
                .init(
                    day: 1, date: monday, phase: .follicular, plannedWorkout: WorkoutID(), workout: WorkoutID(), action: .progress,
                    plannedDuration: 30, suggestedDuration: 35, reason: "You rated last week's sessions highly."),
                .init(
                    day: 4, date: monday.adding(days: 3), phase: nil, plannedWorkout: WorkoutID(), workout: WorkoutID(), action: .keep,
                    plannedDuration: nil, suggestedDuration: nil, reason: "Steady."),
            ],
            summary: .init(
                from: monday.adding(days: -14), to: monday.adding(days: -1), weeks: [1, 2], plannedSessions: 6, completedSessions: 5,
                completionRate: 5.0 / 6, loggedWorkouts: 7, ratedWorkouts: 4, averageRating: 4.25, averageEnergyBefore: 2.5,
                averageEnergyAfter: 3.75, energyTrend: .rising, isDeload: false, hasEnoughHistory: true, note: "A good fortnight.")
        )
        let written = try CoreRecordContractTests.encoder.encode(suggestion)
        var object = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        object["planId"] = PlanID().description
        let wire = try JSONDecoder.withInternetDates.decode(
            Components.Schemas.PlanProgression.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(wire.week == 3 && wire.startDate == "2027-01-11" && wire.sessions.map(\.action) == [.progress, .keep])
        #expect(wire.sessions[0].plannedWorkoutId == suggestion.sessions[0].plannedWorkout.description && wire.sessions[1].phase == nil)
        #expect(wire.summary.fromDate == "2026-12-28" && wire.summary.deload == false && wire.summary.enoughHistory)
        #expect(wire.summary.energyTrend == .rising && wire.summary.averageRating == 4.25)
        let served = try CoreRecordContractTests.keys(try CoreRecordContractTests.encoder.encode(wire))
        #expect(try CoreRecordContractTests.keys(written) == served.subtracting(["planId"]))

        #expect(try ContractJSON.record(PlanProgression.Suggestion.self, from: wire) == suggestion)
    }

    @Test func aSessionWithoutAWorkoutIdIsNotUnderstood() throws {
        let text = #"{"day":1,"date":"2027-01-11","plannedWorkoutId":"x","workoutId":"x","action":"keep","reason":"r"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PlanProgression.Session.self, from: Data(text.utf8)) }
    }
}

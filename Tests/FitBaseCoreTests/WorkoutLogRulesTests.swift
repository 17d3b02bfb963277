import FitBaseCore
import Foundation
import Testing

/// The rules of a workout log without a server: the catalog's answer, `now` and the cycle position are given.
@Suite struct WorkoutLogRulesTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let workout = CatalogWorkout(
        id: WorkoutID(rawValue: UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))), title: "Morning Flow",
        description: "Gentle.", type: .yoga, durationMinutes: 30, intensity: .low, phases: [.follicular], equipment: [.yogaMat],
        thumbnailURL: "https://example.com/t.jpg", videoURL: "https://example.com/v.m3u8", instructorName: "Test", tags: [],
        isFeatured: false, isPremium: false, targetAreas: [.fullBody], benefits: []
    )

    static func draft(
        completedAt: Date = now.addingTimeInterval(-3600), duration: Int = 30, rating: Int? = 4, energyBefore: Int? = 2,
        energyAfter: Int? = 4, notes: String? = "Felt good."
    ) -> WorkoutLogDraft {
        WorkoutLogDraft(
            workoutId: workout.id.description.uppercased(), completedAt: completedAt, duration: duration, rating: rating,
            energyBefore: energyBefore, energyAfter: energyAfter, notes: notes
        )
    }

    /// The rules broken by `draft`, in order; empty when it passes.
    static func errors(_ draft: WorkoutLogDraft, workout: CatalogWorkout? = workout) -> [FieldError] {
        do {
            _ = try WorkoutLogRules.checked(draft, workout: workout, now: now)
            return []
        } catch {
            return error.errors
        }
    }

    @Test func aValidDraftMakesTheLogWithItsWorkoutDayAndCyclePosition() throws {
        let draft = Self.draft()
        #expect(draft.workoutID == Self.workout.id)
        let checked = try WorkoutLogRules.checked(draft, workout: Self.workout, now: Self.now)
        let id = WorkoutLogID()
        let day = try #require(CalendarDay("2026-11-18"))
        let position = CyclePhases.position(cycleDay: 8, length: 28, periodLength: 5)
        let log = checked.log(id: id, localDate: day, cycle: position)
        #expect(
            log == WorkoutLog(
                id: id, workout: Self.workout.id, workoutType: .yoga, workoutTitle: "Morning Flow", completedAt: draft.completedAt,
                localDate: day, durationMinutes: 30, rating: 4, energyBefore: 2, energyAfter: 4, notes: "Felt good.",
                cyclePhase: .follicular, cycleDay: 8
            )
        )
        let withoutCycle = checked.log(id: id, localDate: day, cycle: nil)
        #expect(withoutCycle.cyclePhase == nil)
        #expect(withoutCycle.cycleDay == nil)
    }

    @Test func optionalFieldsMayBeLeftOutAndBoundsAreAccepted() {
        #expect(Self.errors(Self.draft(rating: nil, energyBefore: nil, energyAfter: nil, notes: nil)).isEmpty)
        #expect(Self.errors(Self.draft(duration: 1, rating: 1, energyBefore: 5, energyAfter: 1)).isEmpty)
        #expect(Self.errors(Self.draft(duration: 600, notes: String(repeating: "é", count: 1000))).isEmpty)
        #expect(Self.errors(Self.draft(completedAt: Self.now.addingTimeInterval(300))).isEmpty)
    }

    @Test func aWorkoutNotInTheCatalogIsRefused() {
        let expected = [FieldError(field: "workoutId", message: "is not a workout of the catalog")]
        #expect(Self.errors(Self.draft(), workout: nil) == expected)
        let notAnID = WorkoutLogDraft(workoutId: "morning-flow", completedAt: Self.now, duration: 30)
        #expect(notAnID.workoutID == nil)
        #expect(Self.errors(notAnID, workout: nil) == expected)
    }

    @Test func aLogMoreThanFiveMinutesAheadIsRefused() {
        #expect(
            Self.errors(Self.draft(completedAt: Self.now.addingTimeInterval(301)))
                == [FieldError(field: "completedAt", message: "must not be in the future")]
        )
    }

    @Test(arguments: [0, -5, 601])
    func aDurationOutsideOneToSixHundredMinutesIsRefused(_ minutes: Int) {
        #expect(Self.errors(Self.draft(duration: minutes)) == [FieldError(field: "duration", message: "must be between 1 and 600 minutes")])
    }

    @Test(arguments: [0, 6])
    func ratingAndEnergiesOutsideOneToFiveAreRefused(_ value: Int) {
        let message = "must be between 1 and 5"
        #expect(Self.errors(Self.draft(rating: value)) == [FieldError(field: "rating", message: message)])
        #expect(Self.errors(Self.draft(energyBefore: value)) == [FieldError(field: "energyBefore", message: message)])
        #expect(Self.errors(Self.draft(energyAfter: value)) == [FieldError(field: "energyAfter", message: message)])
    }

    @Test func notesOverAThousandCharactersAreRefused() {
        #expect(
            Self.errors(Self.draft(notes: String(repeating: "a", count: 1001)))
                == [FieldError(field: "notes", message: "must be at most 1000 characters")]
        )
    }

    @Test func everyBrokenRuleIsReportedAtOnceInFieldOrder() {
        let draft = Self.draft(
            completedAt: Self.now.addingTimeInterval(3600), duration: 0, rating: 9, energyBefore: 0, energyAfter: 6,
            notes: String(repeating: "a", count: 1001)
        )
        #expect(
            Self.errors(draft, workout: nil) == [
                FieldError(field: "workoutId", message: "is not a workout of the catalog"),
                FieldError(field: "completedAt", message: "must not be in the future"),
                FieldError(field: "duration", message: "must be between 1 and 600 minutes"),
                FieldError(field: "rating", message: "must be between 1 and 5"),
                FieldError(field: "energyBefore", message: "must be between 1 and 5"),
                FieldError(field: "energyAfter", message: "must be between 1 and 5"),
                FieldError(field: "notes", message: "must be at most 1000 characters"),
            ]
        )
    }

    /// What a form checks before saving is the same rule set, the workout aside: the form has no rule of its own.
    @Test func theFieldsAUserFillsInAreCheckedWithoutTheCatalog() {
        #expect(WorkoutLogRules.problems(Self.draft(), now: Self.now).isEmpty)
        let broken = Self.draft(duration: 601, rating: 0, notes: String(repeating: "n", count: 1001))
        #expect(WorkoutLogRules.problems(broken, now: Self.now) == Self.errors(broken).filter { $0.field != "workoutId" })
        #expect(WorkoutLogRules.problems(broken, now: Self.now).map(\.field) == ["duration", "rating", "notes"])
        #expect(WorkoutLogRules.problems(broken, now: Self.now).first?.message == "must be between 1 and 600 minutes")
    }
}

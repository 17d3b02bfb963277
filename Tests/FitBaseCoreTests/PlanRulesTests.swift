import FitBaseCore
import Foundation
import Testing

/// The rules of a training plan without a server: which of its workouts the catalog holds is given.
@Suite struct PlanRulesTests {
    static let strength = WorkoutID(rawValue: UUID(uuid: (0xA0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1)))
    static let yoga = WorkoutID(rawValue: UUID(uuid: (0xB0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 2)))
    static let catalog: Set<WorkoutID> = [strength, yoga]
    /// A workout id that is not in ``catalog``.
    static let retired = "c0000000-0000-4000-8000-000000000003"

    static func draft(
        name: String = "Spring block", startDate: String = "2026-03-02", endDate: String? = "2026-03-15", daysPerWeek: Int = 3,
        isCompleted: Bool? = nil, weeks: [PlanDraft.Week]? = nil
    ) -> PlanDraft {
        PlanDraft(
            name: name, notes: "Build up slowly.", startDate: startDate, endDate: endDate, daysPerWeek: daysPerWeek,
            isCompleted: isCompleted,
            weeklyWorkouts: weeks ?? [
                .init(week: 1, days: [.init(day: 1, workoutIds: [strength.description.uppercased()]), .init(day: 3, workoutIds: [])]),
                .init(week: 2, days: [.init(day: 5, workoutIds: [yoga.description, strength.description])]),
            ]
        )
    }

    /// The rules broken by `draft`, in order; empty when it passes.
    static func errors(_ draft: PlanDraft) -> [FieldError] {
        do {
            _ = try PlanRules.checked(draft, id: PlanID(), inCatalog: catalog)
            return []
        } catch {
            return error.errors
        }
    }

    @Test func aValidDraftMakesTheNormalizedPlan() throws {
        let plan = try PlanRules.checked(Self.draft(name: " \n Spring block\t"), id: PlanID(), inCatalog: Self.catalog)
        #expect(plan.name == "Spring block")
        #expect(plan.notes == "Build up slowly.")
        #expect(plan.startDate == CalendarDay("2026-03-02"))
        #expect(plan.endDate == CalendarDay("2026-03-15"))
        #expect(plan.daysPerWeek == 3)
        #expect(plan.isCompleted == false)
        #expect(plan.weeklyWorkouts.map(\.week) == [1, 2])
        #expect(plan.weeklyWorkouts.map { $0.days.map(\.day) } == [[1, 3], [5]])
        #expect(plan.weeklyWorkouts.map { $0.days.map(\.workouts) } == [[[Self.strength], []], [[Self.yoga, Self.strength]]])
    }

    @Test func optionalFieldsAndBoundsAreAccepted() throws {
        let plan = try PlanRules.checked(Self.draft(endDate: nil, daysPerWeek: 7, isCompleted: true, weeks: []), id: PlanID(), inCatalog: [])
        #expect(plan.endDate == nil)
        #expect(plan.isCompleted)
        #expect(plan.weeklyWorkouts.isEmpty)
        #expect(Self.errors(Self.draft(name: String(repeating: "é", count: 200), endDate: "2026-03-02", daysPerWeek: 1)).isEmpty)
        #expect(Self.errors(Self.draft(weeks: [.init(week: 1, days: [.init(day: 7, workoutIds: [])])])).isEmpty)
    }

    @Test func theWorkoutsToLookUpAreTheIdsInTheOrderNamed() {
        let draft = Self.draft(weeks: [
            .init(week: 1, days: [.init(day: 1, workoutIds: [Self.yoga.description, "not-an-id"])]),
            .init(week: 2, days: [.init(day: 2, workoutIds: [Self.retired, Self.yoga.description.uppercased()])]),
        ])
        #expect(draft.workoutIDs == [Self.yoga, WorkoutID(Self.retired), Self.yoga])
    }

    @Test(arguments: ["", "  \n\t ", String(repeating: "a", count: 201)])
    func aNameOfNoneOrOverTwoHundredCharactersIsRefused(_ name: String) {
        #expect(Self.errors(Self.draft(name: name)) == [FieldError(field: "name", message: "must be 1–200 characters")])
    }

    @Test func aStartNotWrittenAsADateIsRefused() {
        #expect(
            Self.errors(Self.draft(startDate: "2026-02-30", endDate: nil))
                == [FieldError(field: "startDate", message: "must be a date written YYYY-MM-DD")]
        )
    }

    @Test func anEndNotWrittenAsADateIsRefused() {
        #expect(Self.errors(Self.draft(endDate: "March 15")) == [FieldError(field: "endDate", message: "must be a date written YYYY-MM-DD")])
    }

    @Test func anEndBeforeTheStartIsRefused() {
        #expect(Self.errors(Self.draft(endDate: "2026-03-01")) == [FieldError(field: "endDate", message: "must not be before startDate")])
    }

    @Test(arguments: [0, 8])
    func daysPerWeekOutsideOneToSevenAreRefused(_ days: Int) {
        #expect(Self.errors(Self.draft(daysPerWeek: days)) == [FieldError(field: "daysPerWeek", message: "must be between 1 and 7")])
    }

    @Test func weeksOutOfOrderAreRefusedByTheirPath() {
        let weeks: [PlanDraft.Week] = [.init(week: 1, days: []), .init(week: 3, days: []), .init(week: 2, days: [])]
        #expect(
            Self.errors(Self.draft(weeks: weeks)) == [
                FieldError(field: "weeklyWorkouts[1].week", message: "must be 2: weeks are numbered from 1 in order"),
                FieldError(field: "weeklyWorkouts[2].week", message: "must be 3: weeks are numbered from 1 in order"),
            ]
        )
    }

    @Test(arguments: [0, 8])
    func aDayOutsideMondayToSundayIsRefusedByItsPath(_ day: Int) {
        let weeks: [PlanDraft.Week] = [.init(week: 1, days: [.init(day: 1, workoutIds: []), .init(day: day, workoutIds: [])])]
        #expect(
            Self.errors(Self.draft(weeks: weeks)) == [FieldError(field: "weeklyWorkouts[0].days[1].day", message: "must be 1 (Monday) to 7 (Sunday)")]
        )
    }

    @Test func aWorkoutNotInTheCatalogIsRefusedByItsPath() {
        let weeks: [PlanDraft.Week] = [
            .init(week: 1, days: [.init(day: 1, workoutIds: [Self.strength.description]), .init(day: 2, workoutIds: [Self.yoga.description, "yoga", Self.retired])])
        ]
        #expect(
            Self.errors(Self.draft(weeks: weeks)) == [
                FieldError(field: "weeklyWorkouts[0].days[1].workoutIds[1]", message: "is not a workout of the catalog"),
                FieldError(field: "weeklyWorkouts[0].days[1].workoutIds[2]", message: "is not a workout of the catalog"),
            ]
        )
    }

    @Test func everyBrokenRuleIsReportedAtOnceTheWorkoutsLast() {
        let weeks: [PlanDraft.Week] = [
            .init(week: 1, days: [.init(day: 9, workoutIds: [Self.retired])]),
            .init(week: 1, days: [.init(day: 2, workoutIds: [Self.strength.description]), .init(day: 0, workoutIds: ["x"])]),
        ]
        #expect(
            Self.errors(Self.draft(name: " ", startDate: "2026-03-10", endDate: "2026-03-09", daysPerWeek: 0, weeks: weeks)) == [
                FieldError(field: "name", message: "must be 1–200 characters"),
                FieldError(field: "endDate", message: "must not be before startDate"),
                FieldError(field: "daysPerWeek", message: "must be between 1 and 7"),
                FieldError(field: "weeklyWorkouts[0].days[0].day", message: "must be 1 (Monday) to 7 (Sunday)"),
                FieldError(field: "weeklyWorkouts[1].week", message: "must be 2: weeks are numbered from 1 in order"),
                FieldError(field: "weeklyWorkouts[1].days[1].day", message: "must be 1 (Monday) to 7 (Sunday)"),
                FieldError(field: "weeklyWorkouts[0].days[0].workoutIds[0]", message: "is not a workout of the catalog"),
                FieldError(field: "weeklyWorkouts[1].days[1].workoutIds[0]", message: "is not a workout of the catalog"),
            ]
        )
        #expect(
            Self.errors(Self.draft(startDate: "someday", endDate: "later", weeks: [])) == [
                FieldError(field: "startDate", message: "must be a date written YYYY-MM-DD"),
                FieldError(field: "endDate", message: "must be a date written YYYY-MM-DD"),
            ]
        )
    }
}

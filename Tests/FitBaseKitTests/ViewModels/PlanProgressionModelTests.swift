import FitBaseCore
import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct PlanProgressionModelTests {
    /// A fixture whose user bought `productID` (the test sets up the purchase, so the store answers it).
    private func buy(_ productID: String, _ fixture: Fixture) async throws {
        fixture.fakes.billing.knobs.implement(.purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        _ = try await fixture.fakes.billing.purchase(productID: productID)
    }

    private let planID = FakeData.plan(start: CalendarDay(year: 2026, month: 1, day: 5)!).id

    /// Free and Pro lack `advancedProgression`: the answer's tier is the prompt, nothing the Kit decides itself.
    @Test func freeAndProUsersGetTheUpgradePromptFromTheAnswer() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.plans.knobs.implement(.plan, .progression)
        let model = PlanProgressionModel(planID: planID, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.isLocked && model.suggestion == nil && model.rows.isEmpty && !model.isLoading)
        #expect(model.paywall?.requiredTier == .premium && model.paywall?.feature == .advancedProgression)
        model.dismissPaywall()
        #expect(model.paywall == nil && model.isLocked)

        try await buy("fitbase.pro.monthly", fixture)
        await model.load()
        #expect(model.paywall?.requiredTier == .premium)
        #expect(fixture.events == Array(repeating: .operationFailed(feature: .plans, reason: .upgradeRequired), count: 2))
    }

    @Test func premiumSuggestsTheComingWeekAsCoreDecidesItAndMovesBetweenWeeks() async throws {
        let fixture = Fixture(.strict)
        try await buy("fitbase.premium.monthly", fixture)
        fixture.fakes.plans.knobs.implement(.plan, .progression)
        fixture.fakes.catalog.knobs.implement(.workout)
        let model = PlanProgressionModel(planID: planID, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error == nil && !model.isLocked && model.week == 2 && model.weekCount == 4)

        // The fake answers what Core's rules make of the fakes' data, as the server does.
        let today = CalendarDay(fixture.clock.now, in: .gmt)
        let plan = FakeData.plan(start: WorkoutStreaks.weekStart(of: today))
        let prediction = CyclePredictor(profileCycleLength: 28, profilePeriodLength: 5)
            .predict(periods: FakeData.periods(today: today).map { CyclePredictor.Period(start: $0.start, end: $0.end) }, today: today)
        let expected = try PlanProgression.suggestion(.init(
            plan: plan, week: 2, today: today, logs: FakeData.history(now: fixture.clock.now).map(\.log), catalog: FakeData.workouts,
            isEntitledToPremium: true, prediction: prediction, equipment: Set(try #require(FakeData.profile.availableEquipment))
        ))
        #expect(model.suggestion == expected)
        #expect(model.rows.map(\.session) == expected.sessions && model.rows.map(\.id) == [0, 1, 2])
        #expect(model.rows.map(\.planned?.id) == plan.weeklyWorkouts[1].days.flatMap(\.workouts))
        #expect(model.rows.allSatisfy { $0.session.phase != nil && $0.workout?.id == $0.session.workout })
        #expect(model.rows.allSatisfy { ($0.suggested == nil) == ($0.session.workout == $0.session.plannedWorkout) })
        #expect(model.actionCounts.values.reduce(0, +) == 3)

        #expect(model.hasPreviousWeek && model.hasNextWeek)
        await model.showNextWeek()
        await model.showNextWeek()
        #expect(model.week == 4 && !model.hasNextWeek)
        await model.showNextWeek()
        #expect(model.week == 4 && fixture.fakes.plans.knobs.callCount(.progression) == 3)
        await model.showPreviousWeek()
        await model.showPreviousWeek()
        await model.showPreviousWeek()
        #expect(model.week == 1 && !model.hasPreviousWeek)
        await model.showPreviousWeek()
        #expect(model.week == 1 && fixture.fakes.plans.knobs.callCount(.progression) == 6 && fixture.events.isEmpty)
    }

    @Test func aWeekOutsideThePlanNamesTheFieldAndAnUnsyncedPlanIsNotFound() async throws {
        let fixture = Fixture(.empty)
        try await buy("fitbase.premium.monthly", fixture)
        fixture.fakes.plans.knobs.implement(.plan, .progression, .save, .syncNow)
        fixture.fakes.catalog.knobs.implement(.workout)
        let today = CalendarDay(fixture.clock.now, in: .gmt)
        // Four weeks that ended a month ago: no week follows by default.
        let old = FakeData.plan(start: WorkoutStreaks.weekStart(of: today).adding(days: -56))
        _ = try await fixture.fakes.plans.save(old)
        let model = PlanProgressionModel(planID: old.id, dependencies: fixture.dependencies)
        await model.load(week: 2)
        #expect(model.error?.kind == .notFound && !model.isLocked && model.paywall == nil)

        try await fixture.fakes.plans.syncNow()
        await model.load()
        #expect(model.error?.fieldErrors["week"] != nil && model.suggestion == nil)
        await model.load(week: 9)
        #expect(model.error?.kind == .invalidInput && model.error?.fieldErrors["week"] != nil)
        await model.load(week: 4)
        #expect(model.error == nil && model.week == 4 && model.rows.count == 3)
        // Without cycle data no day has a phase.
        #expect(model.rows.allSatisfy { $0.session.phase == nil })
        // A failure keeps the week on screen.
        fixture.fakes.plans.knobs.fail(.progression, with: .offline)
        await model.load(week: 3)
        #expect(model.error?.isOffline == true && model.week == 4)
    }
}

import FitBaseCore
import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct PlansModelTests {
    /// A fixture whose user has Pro (custom plans): the test sets up the purchase, so the store answers purchases.
    private func proFixture(_ scenario: FakeScenario = .strict) async throws -> Fixture {
        let fixture = Fixture(scenario)
        fixture.fakes.billing.knobs.implement(.purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        _ = try await fixture.fakes.billing.purchase(productID: "fitbase.pro.monthly")
        return fixture
    }

    @Test func showsTheDevicesPlansAndSyncs() async {
        let fixture = Fixture(.strict)
        fixture.fakes.plans.knobs.implement(.plans, .syncNow)
        let model = PlansModel(dependencies: fixture.dependencies)
        await model.appear()
        #expect(model.plans.count == 1 && !model.isEmpty)
        await eventually { model.syncStatus?.state == .idle && model.syncStatus?.lastSyncedAt != nil }
        #expect(!model.hasPendingChanges && !model.isOffline)
        model.disappear()
    }

    /// The server's rule (Core's ``PlanRules/plansWithoutCustomPlans``): every tier keeps one plan; a second is Pro's.
    @Test func aFreeUsersFirstPlanIsAllowedAndASecondNeedsPro() async throws {
        let fixture = Fixture(.empty)
        fixture.fakes.plans.knobs.implement(.plans, .save, .syncNow)
        let model = PlansModel(dependencies: fixture.dependencies)
        await model.appear()
        await model.create()
        #expect(model.paywall == nil && model.draft != nil)
        model.draft?.name = "First"
        await model.save()
        #expect(model.plans.map(\.name) == ["First"] && model.error == nil)

        await model.create()
        #expect(model.paywall == UpgradePrompt(requiredTier: .pro, feature: .customPlans) && model.draft == nil)
        model.dismissPaywall()
        #expect(model.paywall == nil)
        // The fake refuses the second plan as the server does, whoever asks.
        var second = try #require(model.plans.first)
        second.id = PlanID()
        let refused = await #expect(throws: KitError.self) { try await fixture.fakes.plans.save(second) }
        #expect(refused?.kind == .upgradeRequired && refused?.requiredTier == .pro)
        model.disappear()
    }

    @Test func createEditAndDeleteOfflineFirst() async throws {
        let fixture = try await proFixture(.empty)
        fixture.fakes.plans.knobs.implement(.delete, .plans, .save, .syncNow)
        let model = PlansModel(dependencies: fixture.dependencies)
        await model.appear()
        #expect(model.isEmpty)
        fixture.fakes.plans.knobs.fail(.syncNow, with: .offline)

        await model.create()
        model.draft?.name = "  Spring block "
        model.draft?.daysPerWeek = 4
        await model.save()
        #expect(model.plans.map(\.name) == ["Spring block"] && model.draft == nil && model.error == nil)
        await eventually { model.isOffline && model.hasPendingChanges }
        #expect(fixture.events.contains(.planSaved))

        let plan = model.plans[0]
        model.edit(plan)
        #expect(model.draft?.name == "Spring block" && model.draft?.daysPerWeek == 4)
        model.draft?.notes = "more rest"
        await model.save()
        #expect(model.plans.count == 1 && model.plans[0].notes == "more rest")

        fixture.fakes.plans.knobs.clearFailures()
        await model.sync()
        await eventually { model.syncStatus?.pendingCount == 0 && !model.isOffline }

        await model.delete(model.plans[0])
        #expect(model.isEmpty)
        model.disappear()
    }

    @Test func theEditorIsChecked() async throws {
        let fixture = try await proFixture()
        let model = PlansModel(dependencies: fixture.dependencies)
        await model.create()
        model.draft?.daysPerWeek = 9
        await model.save()
        #expect(model.fieldErrors.keys.sorted() == ["daysPerWeek", "name"] && model.draft != nil)
        model.cancelEditing()
        #expect(model.draft == nil)
        await model.save()
        #expect(fixture.fakes.plans.knobs.callCount(.save) == 0)
    }

    @Test func aRefusedSaveKeepsTheEditorOpen() async throws {
        let fixture = try await proFixture()
        fixture.fakes.plans.knobs.implement(.save)
        let model = PlansModel(dependencies: fixture.dependencies)
        await model.create()
        model.draft?.name = "Plan"
        model.draft?.weeklyWorkouts = [TrainingPlan.Week(week: 1, days: [TrainingPlan.Day(day: 1, workouts: [WorkoutID()])])]
        await model.save()
        #expect(model.error?.kind == .invalidInput && model.draft != nil)
    }

    @Test func failures() async {
        let fixture = Fixture(.strict)
        fixture.fakes.plans.knobs.implement(.delete, .plans, .save, .syncNow)
        fixture.fakes.plans.knobs.fail(.plans, with: KitError(.storage))
        fixture.fakes.plans.knobs.fail(.syncNow, with: KitError(.server))
        let model = PlansModel(dependencies: fixture.dependencies)
        await model.appear()
        #expect(model.error?.kind == .server && model.plans.isEmpty && !model.isEmpty)
        await model.loadLocal()
        #expect(model.error?.kind == .storage)
        fixture.fakes.plans.knobs.fail(.delete, with: KitError(.storage))
        await model.delete(FakeData.plan(start: CalendarDay(fixture.clock.now, in: .gmt)))
        #expect(model.error?.kind == .storage)
        fixture.fakes.plans.knobs.fail(.save, with: .upgradeRequired(.pro))
        model.edit(FakeData.plan(start: CalendarDay(fixture.clock.now, in: .gmt)))
        await model.save()
        #expect(model.paywall?.requiredTier == .pro)
        model.disappear()
    }
}

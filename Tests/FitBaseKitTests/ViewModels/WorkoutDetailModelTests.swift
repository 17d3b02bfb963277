import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct WorkoutDetailModelTests {
    private let free = FakeData.workouts.first { !$0.isPremium }!
    private let premium = FakeData.workouts.first { $0.isPremium }!

    @Test func startingAndCompletingLogsTheWorkoutWithAnalytics() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.history.knobs.implement(.history, .log)
        let id = free.id
        let model = WorkoutDetailModel(workoutID: id, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.detail?.workout.title == free.title && !model.isLocked && !model.isPremium)
        model.start()
        #expect(model.session == .inProgress(startedAt: fixture.clock.now))
        fixture.clock.advance(by: .seconds(25 * 60))
        model.rating = 5
        model.energyBefore = 2
        model.energyAfter = 4
        model.notes = " felt strong "
        await model.complete()
        guard case .completed(let logged) = model.session else { Issue.record("not completed: \(model.session)"); return }
        #expect(logged.log.durationMinutes == 25 && logged.log.notes == "felt strong" && logged.log.rating == 5)
        #expect(fixture.events == [.workoutStarted(workoutID: id), .workoutCompleted(workoutID: id)])
        #expect(try await fixture.fakes.history.history().first?.id == logged.id)
    }

    @Test func completingWithoutTimingUsesTheWorkoutsLength() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.history.knobs.implement(.log)
        let model = WorkoutDetailModel(workoutID: free.id, dependencies: fixture.dependencies)
        await model.load()
        await model.complete()
        guard case .completed(let logged) = model.session else { Issue.record("not completed"); return }
        #expect(logged.log.durationMinutes == free.durationMinutes)
    }

    @Test func aLockedWorkoutLeadsToThePaywall() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        let model = WorkoutDetailModel(workoutID: premium.id, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.isLocked && model.isPremium)
        model.start()
        #expect(model.paywall == UpgradePrompt(requiredTier: .premium, feature: .premiumContent))
        #expect(model.session == .idle && fixture.events.isEmpty)
        model.dismissPaywall()
        #expect(model.paywall == nil)
    }

    @Test func aPurchaseUnlocksIt() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.billing.knobs.implement(.purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        let model = WorkoutDetailModel(workoutID: premium.id, dependencies: fixture.dependencies)
        _ = try await fixture.fakes.billing.purchase(productID: "fitbase.premium.monthly")
        await model.load()
        model.start()
        #expect(!model.isLocked && model.paywall == nil && model.session != .idle)
    }

    @Test func theFormIsCheckedAndAFailedLogIsTracked() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.history.knobs.implement(.log)
        let id = free.id
        let model = WorkoutDetailModel(workoutID: id, dependencies: fixture.dependencies)
        await model.load()
        model.rating = 9
        model.notes = String(repeating: "n", count: 1_001)
        await model.complete()
        #expect(model.fieldErrors.keys.sorted() == ["notes", "rating"] && model.session == .idle)
        model.rating = 4
        model.notes = ""
        fixture.fakes.history.knobs.fail(.log, with: KitError(.storage))
        await model.complete()
        #expect(model.error?.kind == .storage && model.error?.isRetryable == true)
        #expect(fixture.events == [.workoutFailed(workoutID: id, reason: .storage)])
    }

    @Test func anUpgradeRequiredFailureOpensThePaywall() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.catalog.knobs.fail(.workout, with: .upgradeRequired(.premium))
        let model = WorkoutDetailModel(workoutID: premium.id, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error?.upgrade?.requiredTier == .premium && model.paywall?.requiredTier == .premium)
    }

    @Test func anUnknownOrOfflineWorkout() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        let missing = WorkoutDetailModel(workoutID: WorkoutID(), dependencies: fixture.dependencies)
        await missing.load()
        #expect(missing.error?.kind == .notFound && missing.detail == nil)
        missing.start()
        #expect(missing.session == .idle)
        fixture.fakes.catalog.knobs.fail(.workout, with: .offline)
        let offline = WorkoutDetailModel(workoutID: free.id, dependencies: fixture.dependencies)
        await offline.load()
        #expect(offline.error?.isOffline == true && !offline.isLoading)
    }
}

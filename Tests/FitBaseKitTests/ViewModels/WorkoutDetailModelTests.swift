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

/// Playing a workout's video: the expiring link read when playback starts, renewed before it expires on the test
/// clock and when the player is refused, dropped when playback stops, and the paywall instead for a locked video.
@MainActor @Suite struct WorkoutPlaybackTests {
    private let free = FakeData.workouts.first { !$0.isPremium }!
    private let premium = FakeData.workouts.first { $0.isPremium }!

    @Test func theLinkIsReadAtPlaybackAndRenewedBeforeItExpires() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.media.knobs.implement(.workoutMedia)
        let model = WorkoutDetailModel(workoutID: free.id, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.videoURL == nil)
        await model.startPlayback()
        let first = try #require(model.video)
        #expect(first.link.expiresAt == fixture.clock.now.addingTimeInterval(3_600) && first.kind == .video && first.workout == free.id)
        #expect(fixture.fakes.media.knobs.callCount(.workoutMedia) == 1)

        // Nothing happens until 30 seconds before the expiry…
        await fixture.clock.waitForSleepers()
        fixture.clock.advance(by: .seconds(3_600 - 31))
        #expect(fixture.clock.sleeperCount == 1 && model.video == first)
        // …then a new link replaces it, and its own renewal waits on the clock.
        fixture.clock.advance(by: .seconds(1))
        await fixture.clock.waitForSleepers()
        let second = try #require(model.video)
        #expect(second.link.url != first.link.url && second.link.expiresAt == fixture.clock.now.addingTimeInterval(3_600))
        #expect(fixture.fakes.media.knobs.callCount(.workoutMedia) == 2)

        model.stopPlayback()
        #expect(model.video == nil)
        await eventually { fixture.clock.sleeperCount == 0 }
        fixture.clock.advance(by: .seconds(7_200))
        #expect(fixture.fakes.media.knobs.callCount(.workoutMedia) == 2)
    }

    @Test func aRefusedLinkIsRenewedAtOnce() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.media.knobs.implement(.workoutMedia)
        let model = WorkoutDetailModel(workoutID: free.id, dependencies: fixture.dependencies)
        await model.load()
        // Not playing: a refusal means nothing.
        await model.playbackRefused(status: 403)
        #expect(fixture.fakes.media.knobs.callCount(.workoutMedia) == 0)
        await model.startPlayback()
        let first = try #require(model.video)
        await model.playbackRefused(status: 500)
        #expect(model.video == first)
        await model.playbackRefused(status: 403)
        #expect(model.video != first && fixture.fakes.media.knobs.callCount(.workoutMedia) == 2)
        // The earlier link's renewal was replaced, not doubled.
        await fixture.clock.waitForSleepers()
        #expect(fixture.clock.sleeperCount == 1)
        model.stopPlayback()
    }

    @Test func aLockedVideoLeadsToThePaywallAndAFailureShows() async {
        let fixture = Fixture(.strict)
        fixture.fakes.catalog.knobs.implement(.workout)
        fixture.fakes.media.knobs.implement(.workoutMedia)
        let locked = WorkoutDetailModel(workoutID: premium.id, dependencies: fixture.dependencies)
        await locked.load()
        await locked.startPlayback()
        #expect(locked.paywall == UpgradePrompt(requiredTier: .premium, feature: .premiumContent) && locked.video == nil)
        #expect(fixture.fakes.media.knobs.callCount(.workoutMedia) == 0)

        let model = WorkoutDetailModel(workoutID: free.id, dependencies: fixture.dependencies)
        await model.load()
        fixture.fakes.media.knobs.failOnce(.workoutMedia, with: .offline)
        await model.startPlayback()
        #expect(model.video == nil && model.error?.isOffline == true)
    }
}

import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct TodayModelTests {
    @Test func loadsTodaysSuggestionsForThePhase() async {
        let fixture = Fixture(.strict)
        fixture.fakes.recommendations.knobs.implement(.today)
        let model = TodayModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.recommendations?.workouts.count == 3 && model.recommendations?.phase != nil)
        #expect(model.source == .server && !model.isCached && !model.isStale && !model.isEmpty)
        #expect(model.lowEnergyAlternative == nil)
    }

    @Test func lowEnergyShowsTheGentlerAlternative() async {
        let fixture = Fixture(.strict)
        fixture.fakes.recommendations.knobs.implement(.refresh, .today)
        let model = TodayModel(dependencies: fixture.dependencies)
        await model.load()
        await model.selectEnergy(.low)
        #expect(model.energy == .low && model.recommendations?.energy == .low)
        #expect(model.lowEnergyAlternative?.intensity == .low)
        #expect(model.recommendations?.workouts.allSatisfy { $0.workout.intensity != .high } == true)
        let refreshes = fixture.fakes.recommendations.knobs.callCount(.refresh)
        await model.selectEnergy(.low)
        #expect(fixture.fakes.recommendations.knobs.callCount(.refresh) == refreshes)
    }

    @Test func cachedThenFresh() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.recommendations.knobs.implement(.refresh, .today)
        fixture.fakes.recommendations.knobs.fail(.refresh, with: .offline)
        let model = TodayModel(dependencies: fixture.dependencies)
        await model.load(policy: .cacheOnly)
        #expect(model.isCached && model.source == .cache)
        await model.refresh()
        #expect(model.error?.isOffline == true && model.recommendations != nil && model.isCached)
        fixture.fakes.recommendations.knobs.clearFailures()
        fixture.clock.advance(by: .seconds(60))
        await model.refresh()
        #expect(model.error == nil && model.source == .server && model.fetchedAt == fixture.clock.now)
        let recommendation = try #require(model.recommendations?.workouts.first)
        model.open(recommendation)
        #expect(fixture.events.last == .recommendationOpened(workoutID: recommendation.workout.id))
    }

    @Test func withoutCycleDataTheRulesStillSuggest() async {
        let fixture = Fixture(.empty)
        fixture.fakes.recommendations.knobs.implement(.today)
        let model = TodayModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.recommendations?.phase == nil && !model.isEmpty)
    }

    @Test func anEmptyCatalogIsTheEmptyState() async {
        let fixture = Fixture(.strict)
        fixture.fakes.recommendations.knobs.implement(.today)
        await fixture.fakes.catalog.setCatalog([])
        let model = TodayModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.isEmpty)
    }

    @Test func offlineFirstLoad() async {
        let fixture = Fixture(.strict)
        fixture.fakes.recommendations.knobs.implement(.today)
        fixture.fakes.recommendations.knobs.fail(.today, with: .offline)
        let model = TodayModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error?.isRetryable == true && model.recommendations == nil && !model.isLoading)
        #expect(fixture.events == [.operationFailed(feature: .recommendations, reason: .offline)])
    }

    @Test func aRefreshSupersedesASlowLoad() async {
        let fixture = Fixture(.strict)
        fixture.fakes.recommendations.knobs.implement(.refresh, .today)
        fixture.fakes.recommendations.knobs.latency = .seconds(3)
        let model = TodayModel(dependencies: fixture.dependencies)
        let slow = Task { await model.load() }
        await fixture.clock.waitForSleepers()
        fixture.fakes.recommendations.knobs.latency = .zero
        await model.selectEnergy(.high)
        fixture.clock.advance(by: .seconds(3))
        await slow.value
        #expect(model.recommendations?.energy == .high && model.source == .server)
    }
}

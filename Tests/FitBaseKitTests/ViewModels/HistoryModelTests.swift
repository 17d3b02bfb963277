import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct HistoryModelTests {
    /// A fixture whose user has bought Pro (the `analytics` feature).
    private func proFixture() async throws -> Fixture {
        let fixture = Fixture(.strict)
        fixture.fakes.billing.knobs.implement(.purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        _ = try await fixture.fakes.billing.purchase(productID: "fitbase.pro.monthly")
        return fixture
    }

    @Test func pagesStatsAndWeeklyCharts() async throws {
        let fixture = try await proFixture()
        fixture.fakes.history.knobs.implement(.history, .stats, .weeklySeries)
        let model = HistoryModel(dependencies: fixture.dependencies, pageSize: 10, weeks: 6)
        await model.load()
        #expect(model.logs.count == 10 && model.hasMore && !model.isEmpty)
        #expect(model.stats?.totalWorkouts == 19 && model.stats?.byType.isEmpty == false && model.analyticsPrompt == nil)
        #expect(model.minutesPerWeek.count == 6 && model.workoutsPerWeek.count == 6)
        #expect(model.workoutsPerWeek.compactMap(\.value).reduce(0, +) > 0)
        model.loadMore()
        #expect(model.logs.count == 19 && !model.hasMore)
        let dates = model.logs.map(\.log.completedAt)
        #expect(dates == dates.sorted(by: >))
    }

    /// The detail is the `analytics` feature (Pro), as on the server: a free user sees the totals, streaks and this
    /// week, no charts, and what unlocks the rest.
    @Test func aFreeUserSeesTheBasicFiguresAndWhatUnlocksTheDetail() async {
        let fixture = Fixture(.strict)
        fixture.fakes.history.knobs.implement(.history, .stats)
        let model = HistoryModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.stats?.totalWorkouts == 19 && model.stats?.currentStreak != nil)
        #expect(model.stats?.byType.isEmpty == true && model.stats?.byPhase.isEmpty == true && model.stats?.weekly.isEmpty == true)
        #expect(model.minutesPerWeek.isEmpty && model.workoutsPerWeek.isEmpty)
        #expect(model.analyticsPrompt == UpgradePrompt(requiredTier: .pro, feature: .analytics))
        #expect(fixture.fakes.history.knobs.callCount(.weeklySeries) == 0)
    }

    @Test func deletingALogUpdatesTheListAndStats() async {
        let fixture = Fixture(.strict)
        fixture.fakes.history.knobs.implement(.deleteLog, .history, .stats, .weeklySeries)
        let model = HistoryModel(dependencies: fixture.dependencies)
        await model.load()
        let first = model.logs[0]
        await model.delete(first)
        #expect(!model.logs.contains { $0.id == first.id } && model.stats?.totalWorkouts == 18)
    }

    @Test func nothingLoggedIsTheEmptyState() async {
        let fixture = Fixture(.empty)
        fixture.fakes.history.knobs.implement(.history, .stats, .weeklySeries)
        let model = HistoryModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.isEmpty && model.stats?.totalWorkouts == 0 && model.stats?.currentStreak == 0 && model.minutesPerWeek.allSatisfy { $0.value == 0 })
    }

    @Test func offlineAndAFailedDelete() async {
        let fixture = Fixture(.strict)
        fixture.fakes.history.knobs.implement(.deleteLog, .history, .stats, .weeklySeries)
        fixture.fakes.history.knobs.failOnce(.stats, with: .offline)
        let model = HistoryModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error?.isOffline == true && !model.isLoading && !model.isEmpty)
        await model.load()
        #expect(model.error == nil && model.logs.count == 19)
        fixture.fakes.history.knobs.fail(.deleteLog, with: KitError(.server))
        await model.delete(model.logs[0])
        #expect(model.error?.kind == .server && model.logs.count == 19)
        #expect(fixture.events.last == .operationFailed(feature: .history, reason: .server))
    }

    @Test func aSlowLoadIsSupersededByANewerOne() async {
        let fixture = Fixture(.strict)
        fixture.fakes.history.knobs.implement(.deleteLog, .history, .stats, .weeklySeries)
        fixture.fakes.history.knobs.latency = .seconds(1)
        let model = HistoryModel(dependencies: fixture.dependencies)
        let slow = Task { await model.load() }
        await fixture.clock.waitForSleepers()
        fixture.fakes.history.knobs.latency = .zero
        try? await fixture.fakes.history.deleteLog(id: WorkoutLogID(rawValue: FakeData.uuid(0x300)))
        await model.load()
        #expect(model.stats?.totalWorkouts == 18)
        fixture.clock.advance(by: .seconds(1))
        await slow.value
        #expect(model.stats?.totalWorkouts == 18 && model.logs.count == 18)
    }
}

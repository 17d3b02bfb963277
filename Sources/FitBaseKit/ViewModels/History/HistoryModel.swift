import FitBaseCore
import Foundation
import Observation

/// Workout history and statistics (seed 001): the logged workouts a page at a time, totals and streaks, weekly chart
/// series (minutes and workouts per week), and deleting a log. The detail — by type and phase, the weekly charts — is
/// the `analytics` feature, as on the server: without it the model shows the basic figures and ``analyticsPrompt``.
@MainActor @Observable
public final class HistoryModel {
    /// The logs showing (the first pages of the history, newest first).
    public private(set) var logs: [LoggedWorkout] = []
    public private(set) var stats: HistoryStatistics?
    /// Minutes per week, oldest first.
    public private(set) var minutesPerWeek: [ChartPoint] = []
    /// Workouts per week, oldest first.
    public private(set) var workoutsPerWeek: [ChartPoint] = []
    /// Set when the user's tier lacks `analytics`: what unlocks the detail and the charts (a paywall's prompt).
    public private(set) var analyticsPrompt: UpgradePrompt?
    public private(set) var isLoading = false
    public private(set) var error: ScreenError?

    private let history: any HistoryService
    private let billing: any BillingService
    private let analytics: any AnalyticsService
    private let pageSize: Int
    private let weeks: Int
    @ObservationIgnored private var all: [LoggedWorkout] = []
    @ObservationIgnored private var loaded = false
    @ObservationIgnored private var generation = LoadGeneration()

    /// A model over the services of `dependencies`, showing `pageSize` logs a page and `weeks` weeks of chart.
    public init(dependencies: FitBaseDependencies, pageSize: Int = 20, weeks: Int = 8) {
        history = dependencies.history
        billing = dependencies.billing
        analytics = dependencies.analytics
        self.pageSize = pageSize
        self.weeks = weeks
    }

    /// More logs follow the ones showing.
    public var hasMore: Bool { logs.count < all.count }
    /// Loaded, and nothing logged yet.
    public var isEmpty: Bool { loaded && all.isEmpty }

    /// Loads the history, the statistics and the charts.
    public func load() async {
        let ticket = generation.next()
        isLoading = true
        do throws(KitError) {
            let list = try await history.history()
            let stats = try await history.stats()
            let locked = await billing.requiresUpgrade(for: .analytics)
            let minutes = locked == nil ? try await history.weeklySeries(.minutes, weeks: weeks) : []
            let workouts = locked == nil ? try await history.weeklySeries(.workouts, weeks: weeks) : []
            guard generation.isCurrent(ticket) else { return }
            all = list
            logs = Array(list.prefix(max(pageSize, logs.count)))
            self.stats = stats
            analyticsPrompt = locked.map { UpgradePrompt(requiredTier: $0, feature: .analytics) }
            minutesPerWeek = minutes
            workoutsPerWeek = workouts
            loaded = true
            error = nil
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
        isLoading = false
    }

    /// Shows the next page.
    public func loadMore() {
        logs = Array(all.prefix(logs.count + pageSize))
    }

    /// Deletes a log; the list, statistics and charts update.
    public func delete(_ log: LoggedWorkout) async {
        do throws(KitError) {
            try await history.deleteLog(id: log.id)
        } catch {
            return present(error)
        }
        logs.removeAll { $0.id == log.id }
        await load()
    }

    private func present(_ failure: KitError) {
        isLoading = false
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .history, reason: failure.kind))
    }
}

import FitBaseCore
import Foundation
import Observation

/// The week ahead (seed 001's weekly plan): seven days from today following the predicted phases, a workout on each
/// training day and the rest days where the phase leaves the least energy — as the server lays them out, cache-first
/// so the week opens offline.
@MainActor @Observable
public final class WeekPlanModel {
    /// The week (`nil` until loaded).
    public private(set) var week: WeekRecommendations?
    /// Where the week came from.
    public private(set) var source: LoadSource?
    /// When the server made (or confirmed) it.
    public private(set) var fetchedAt: Date?
    public private(set) var isLoading = false
    public private(set) var error: ScreenError?

    private let service: any RecommendationService
    private let analytics: any AnalyticsService
    @ObservationIgnored private var generation = LoadGeneration()

    /// A model over the services of `dependencies`.
    public init(dependencies: FitBaseDependencies) {
        service = dependencies.recommendations
        analytics = dependencies.analytics
    }

    /// The seven days, in order (empty until loaded).
    public var days: [WeekPlanDay] { week?.days ?? [] }
    /// The days with a workout.
    public var trainingDays: [WeekPlanDay] { days.filter { !$0.isRestDay } }
    /// The days without one.
    public var restDays: [WeekPlanDay] { days.filter(\.isRestDay) }
    /// The minutes of training the week holds.
    public var plannedMinutes: Int { trainingDays.reduce(0) { $0 + ($1.workout?.durationMinutes ?? 0) } }
    /// The week came from the device, not the server just now ("updated … ago").
    public var isCached: Bool { source.map { $0 != .server } ?? false }
    /// The device's copy is past its time to live because the server could not be reached.
    public var isStale: Bool { source == .staleCache }

    /// The days of `phase`, to band the week by phase.
    public func days(in phase: CyclePhase) -> [WeekPlanDay] { days.filter { $0.phase == phase } }

    /// Loads the week, cache-first by default (the screen appearing); `.revalidate` for pull to refresh.
    public func load(policy: CachePolicy = .cacheFirst) async {
        let ticket = generation.next()
        isLoading = true
        defer { if generation.isCurrent(ticket) { isLoading = false } }
        do throws(KitError) {
            let loaded = try await service.week(policy: policy)
            guard generation.isCurrent(ticket) else { return }
            week = loaded.value
            source = loaded.source
            fetchedAt = loaded.fetchedAt
            error = nil
        } catch {
            guard generation.isCurrent(ticket), !error.isCancellation else { return }
            self.error = ScreenError(error)
            analytics.track(.operationFailed(feature: .recommendations, reason: error.kind))
        }
    }

    /// The user opened a day's workout.
    public func open(_ day: WeekPlanDay) {
        guard let workout = day.workout else { return }
        analytics.track(.recommendationOpened(workoutID: workout.id))
    }
}

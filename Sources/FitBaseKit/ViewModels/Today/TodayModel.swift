import FitBaseCore
import Foundation
import Observation

/// The home screen (seed 001): today's recommended workouts for the cycle phase and the energy the user reports, the
/// gentler alternative for a low-energy day, pull to refresh, and whether what shows is the device's copy.
@MainActor @Observable
public final class TodayModel {
    /// Today's suggestions (`nil` until loaded).
    public private(set) var recommendations: TodayRecommendations?
    /// The energy the user chose ("how do you feel today?").
    public private(set) var energy: EnergyLevel?
    /// Where the suggestions came from.
    public private(set) var source: LoadSource?
    /// When the server made (or confirmed) them.
    public private(set) var fetchedAt: Date?
    public private(set) var isLoading = false
    public private(set) var isRefreshing = false
    public private(set) var error: ScreenError?

    private let service: any RecommendationService
    private let analytics: any AnalyticsService
    @ObservationIgnored private var generation = LoadGeneration()

    /// A model over the services of `dependencies`.
    public init(dependencies: FitBaseDependencies) {
        service = dependencies.recommendations
        analytics = dependencies.analytics
    }

    /// The suggestions came from the device, not the server just now ("updated … ago").
    public var isCached: Bool { source.map { $0 != .server } ?? false }
    /// The device's copy is past its time to live because the server could not be reached.
    public var isStale: Bool { source == .staleCache }
    /// Loaded, with nothing to suggest.
    public var isEmpty: Bool { recommendations.map { $0.workouts.isEmpty } ?? false }
    /// The gentler workout to offer, shown when the user feels low.
    public var lowEnergyAlternative: CatalogWorkout? {
        energy == .low ? recommendations?.lowEnergyAlternative : nil
    }

    /// Loads today's suggestions, cache-first by default (the screen appearing).
    public func load(policy: CachePolicy = .cacheFirst) async {
        let ticket = generation.next()
        isLoading = true
        do throws(KitError) {
            let loaded = try await service.today(energy: energy, policy: policy)
            guard generation.isCurrent(ticket) else { return }
            apply(loaded.value, source: loaded.source, fetchedAt: loaded.fetchedAt)
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
        isLoading = false
    }

    /// Asks for new suggestions now (pull to refresh); the cached ones stay on screen if it fails.
    public func refresh() async {
        let ticket = generation.next()
        isRefreshing = true
        defer { isRefreshing = false }
        do throws(KitError) {
            let fresh = try await service.refresh(energy: energy)
            guard generation.isCurrent(ticket) else { return }
            apply(fresh, source: .server, fetchedAt: fresh.generatedAt)
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
    }

    /// The user says how they feel: the suggestions are made again for it.
    public func selectEnergy(_ level: EnergyLevel?) async {
        guard level != energy else { return }
        energy = level
        await refresh()
    }

    /// The user opened a suggestion.
    public func open(_ recommendation: RecommendedWorkout) {
        analytics.track(.recommendationOpened(workoutID: recommendation.workout.id))
    }

    private func apply(_ value: TodayRecommendations, source: LoadSource, fetchedAt: Date) {
        recommendations = value
        self.source = source
        self.fetchedAt = fetchedAt
        error = nil
    }

    private func present(_ failure: KitError) {
        isLoading = false
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .recommendations, reason: failure.kind))
    }
}

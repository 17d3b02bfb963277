import FitBaseCore
import Foundation
import Observation

/// The workout library (seed 001): filters (type, intensity, phase, duration, equipment), paging, a search that
/// waits for 300 ms of quiet on the injected clock, and premium badges. A newer search or filter supersedes an older
/// one: the older request is cancelled, and its answer — should it still arrive — is dropped.
@MainActor @Observable
public final class WorkoutLibraryModel {
    /// A workout as a library cell shows it.
    public struct Item: Sendable, Equatable, Identifiable {
        public var workout: CatalogWorkout
        /// The premium badge shows.
        public var isPremium: Bool { workout.isPremium }
        /// The user's tier does not include it: the badge shows a lock and opening it leads to the paywall.
        public var isLocked: Bool

        public var id: WorkoutID { workout.id }
    }

    /// How long typing must pause before the search runs.
    public static let searchDebounce: Duration = .milliseconds(300)

    /// The filters in force (the search words come from ``searchText``).
    public private(set) var filter = WorkoutFilter()
    /// The search field; each change runs the search once typing pauses.
    public var searchText = "" {
        didSet { if searchText != oldValue { scheduleSearch() } }
    }
    /// The workouts loaded so far, in the filter's order.
    public private(set) var items: [Item] = []
    public private(set) var isLoading = false
    public private(set) var isLoadingMore = false
    public private(set) var error: ScreenError?
    /// Where the first page came from (the cache while offline, so the screen can say so).
    public private(set) var source: LoadSource?

    private let catalog: any CatalogService
    private let billing: any BillingService
    private let analytics: any AnalyticsService
    private let clock: any KitClock
    private let pageSize: Int
    @ObservationIgnored private var nextCursor: String?
    @ObservationIgnored private var generation = LoadGeneration()
    @ObservationIgnored private var searchTask: Task<Void, Never>?

    /// A model over the services of `dependencies`, loading `pageSize` workouts at a time.
    public init(dependencies: FitBaseDependencies, pageSize: Int = 20) {
        catalog = dependencies.catalog
        billing = dependencies.billing
        analytics = dependencies.analytics
        clock = dependencies.clock
        self.pageSize = pageSize
    }

    /// Whether another page follows.
    public var hasMore: Bool { nextCursor != nil }
    /// Loaded, and nothing matches: show "no workouts match" with a clear-filters button.
    public var isEmpty: Bool { source != nil && items.isEmpty && !isLoading }
    /// Whether any filter or search narrows the list.
    public var isFiltered: Bool { filter != WorkoutFilter() || !searchText.trimmingCharacters(in: .whitespaces).isEmpty }
    /// The answer came from the device because the server could not be reached.
    public var isShowingStaleContent: Bool { source == .staleCache }

    // MARK: Filters

    /// Shows only workouts of these types (empty: all).
    public func setTypes(_ types: Set<WorkoutType>) async { await update { $0.types = types } }
    /// Shows only workouts of this intensity (`nil`: any).
    public func setIntensity(_ intensity: Intensity?) async { await update { $0.intensity = intensity } }
    /// Shows only workouts suiting this phase (`nil`: any).
    public func setPhase(_ phase: CyclePhase?) async { await update { $0.phase = phase } }
    /// Shows only workouts of `minimum` to `maximum` minutes.
    public func setDuration(minimum: Int?, maximum: Int?) async {
        await update {
            $0.minDuration = minimum
            $0.maxDuration = maximum
        }
    }
    /// Shows only workouts needing nothing beyond `equipment` (empty: no equipment filter).
    public func setEquipment(_ equipment: Set<Equipment>) async { await update { $0.equipment = equipment } }
    /// Orders the list.
    public func setSort(_ sort: WorkoutSort) async { await update { $0.sort = sort } }

    /// Clears the filters and the search.
    public func clearFilters() async {
        searchText = ""
        await update { $0 = WorkoutFilter() }
    }

    private func update(_ change: (inout WorkoutFilter) -> Void) async {
        change(&filter)
        await load()
    }

    // MARK: Loading

    /// Loads the first page for the filters and search now (appearing, pull to refresh, a filter change); a search
    /// still waiting for typing to pause is dropped.
    public func load(policy: CachePolicy = .cacheFirst) async {
        searchTask?.cancel()
        searchTask = nil
        await loadFirstPage(policy: policy)
    }

    private func loadFirstPage(policy: CachePolicy) async {
        let ticket = generation.next()
        isLoading = true
        var query = filter
        let words = searchText.trimmingCharacters(in: .whitespacesAndNewlines)
        query.search = words.isEmpty ? nil : words
        do throws(KitError) {
            let loaded = try await catalog.workouts(matching: query, page: .first(pageSize), policy: policy)
            let locked = await billing.requiresUpgrade(for: .premiumContent) != nil
            guard generation.isCurrent(ticket) else { return }
            items = loaded.value.items.map { Item(workout: $0, isLocked: $0.isPremium && locked) }
            nextCursor = loaded.value.nextCursor
            source = loaded.source
            error = nil
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
        isLoading = false
    }

    /// Loads the next page (the list scrolled to its end).
    public func loadMore() async {
        guard let cursor = nextCursor, !isLoadingMore, !isLoading else { return }
        let ticket = generation.next()
        isLoadingMore = true
        defer { isLoadingMore = false }
        var query = filter
        let words = searchText.trimmingCharacters(in: .whitespacesAndNewlines)
        query.search = words.isEmpty ? nil : words
        do throws(KitError) {
            let loaded = try await catalog.workouts(matching: query, page: PageRequest(cursor: cursor, limit: pageSize), policy: .cacheFirst)
            let locked = await billing.requiresUpgrade(for: .premiumContent) != nil
            guard generation.isCurrent(ticket) else { return }
            items += loaded.value.items.map { Item(workout: $0, isLocked: $0.isPremium && locked) }
            nextCursor = loaded.value.nextCursor
            error = nil
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
    }

    // MARK: Search

    /// Runs the search once ``searchDebounce`` passes without another keystroke; each keystroke cancels the search
    /// waiting or running before it.
    private func scheduleSearch() {
        searchTask?.cancel()
        searchTask = Task { [weak self, clock] in
            do {
                try await clock.sleep(for: WorkoutLibraryModel.searchDebounce)
            } catch {
                return
            }
            await self?.loadFirstPage(policy: .cacheFirst)
        }
    }

    /// Waits until the search scheduled by the last keystroke has run (or was superseded).
    public func waitForSearch() async {
        await searchTask?.value
    }

    private func present(_ failure: KitError) {
        isLoading = false
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .catalog, reason: failure.kind))
    }
}

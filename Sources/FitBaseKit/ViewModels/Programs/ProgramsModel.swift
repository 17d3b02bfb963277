import FitBaseCore
import Foundation
import Observation

/// The programs shelf (seed 001's multi-week programs): the programs by title a page at a time, with a level filter
/// and the premium lock of the ones the user's tier does not include — cache-first, so the shelf opens offline.
@MainActor @Observable
public final class ProgramsModel {
    /// A program as its cell shows it.
    public struct Item: Sendable, Equatable, Identifiable {
        public var program: CatalogProgram
        /// The user's tier does not include it: the cell shows a lock and starting it leads to the paywall.
        public var isLocked: Bool

        public var id: ProgramID { program.id }
        /// How many weeks it runs.
        public var weekCount: Int { program.weeks.count }
        /// How many workouts it holds in all.
        public var workoutCount: Int { program.weeks.reduce(0) { $0 + $1.count } }
    }

    /// The programs loaded so far, by title.
    public private(set) var items: [Item] = []
    /// Shows only programs of this level (`nil`: all); the filter applies to what is loaded.
    public var level: ProgramLevel?
    public private(set) var isLoading = false
    public private(set) var isLoadingMore = false
    public private(set) var error: ScreenError?
    /// Where the first page came from (the cache while offline, so the screen can say so).
    public private(set) var source: LoadSource?

    private let catalog: any CatalogService
    private let billing: any BillingService
    private let analytics: any AnalyticsService
    private let pageSize: Int
    @ObservationIgnored private var nextCursor: String?
    @ObservationIgnored private var generation = LoadGeneration()

    /// A model over the services of `dependencies`, loading `pageSize` programs at a time.
    public init(dependencies: FitBaseDependencies, pageSize: Int = 20) {
        catalog = dependencies.catalog
        billing = dependencies.billing
        analytics = dependencies.analytics
        self.pageSize = pageSize
    }

    /// The programs the level filter keeps.
    public var visibleItems: [Item] { level.map { level in items.filter { $0.program.level == level } } ?? items }
    /// Whether another page follows.
    public var hasMore: Bool { nextCursor != nil }
    /// Loaded, and no program to show.
    public var isEmpty: Bool { source != nil && visibleItems.isEmpty && !isLoading }
    /// The answer came from the device because the server could not be reached.
    public var isShowingStaleContent: Bool { source == .staleCache }

    /// Loads the first page (appearing, pull to refresh with `.revalidate`).
    public func load(policy: CachePolicy = .cacheFirst) async {
        let ticket = generation.next()
        isLoading = true
        defer { if generation.isCurrent(ticket) { isLoading = false } }
        do throws(KitError) {
            let loaded = try await catalog.programs(page: .first(pageSize), policy: policy)
            let locked = await billing.requiresUpgrade(for: .premiumContent) != nil
            guard generation.isCurrent(ticket) else { return }
            items = loaded.value.items.map { Item(program: $0, isLocked: $0.isPremium && locked) }
            nextCursor = loaded.value.nextCursor
            source = loaded.source
            error = nil
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
    }

    /// Loads the next page (the list scrolled to its end).
    public func loadMore() async {
        guard let cursor = nextCursor, !isLoadingMore, !isLoading else { return }
        let ticket = generation.next()
        isLoadingMore = true
        defer { isLoadingMore = false }
        do throws(KitError) {
            let loaded = try await catalog.programs(page: PageRequest(cursor: cursor, limit: pageSize), policy: .cacheFirst)
            let locked = await billing.requiresUpgrade(for: .premiumContent) != nil
            guard generation.isCurrent(ticket) else { return }
            items += loaded.value.items.map { Item(program: $0, isLocked: $0.isPremium && locked) }
            nextCursor = loaded.value.nextCursor
            error = nil
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .catalog, reason: failure.kind))
    }
}

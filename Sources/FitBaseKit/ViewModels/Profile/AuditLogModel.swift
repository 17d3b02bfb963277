import FitBaseCore
import Foundation
import Observation

/// The user's audit log (seed 003's "who accessed my data"): every read, write, deletion, export and sync of their
/// health and cycle data, newest first, a page at a time.
@MainActor @Observable
public final class AuditLogModel {
    /// The entries loaded so far, newest first.
    public private(set) var entries: [AuditRecord] = []
    /// More entries follow (show "load more", or load them when the list's end appears).
    public private(set) var hasMore = false
    public private(set) var isLoading = false
    public private(set) var error: ScreenError?

    private let profiles: any ProfileService
    private let analytics: any AnalyticsService
    private let pageSize: Int
    @ObservationIgnored private var nextCursor: String?
    @ObservationIgnored private var generation = LoadGeneration()

    /// A model over the services of `dependencies`, loading `pageSize` entries at a time.
    public init(dependencies: FitBaseDependencies, pageSize: Int = 50) {
        profiles = dependencies.profile
        analytics = dependencies.analytics
        self.pageSize = max(1, pageSize)
    }

    /// Entries the server refused (someone was denied the data), for a warning badge.
    public var refusals: [AuditRecord] { entries.filter { $0.outcome == .denied } }

    /// Loads the first page (again).
    public func load() async {
        await loadPage(after: nil)
    }

    /// Loads the next page, when there is one.
    public func loadMore() async {
        guard hasMore, !isLoading, let cursor = nextCursor else { return }
        await loadPage(after: cursor)
    }

    private func loadPage(after cursor: String?) async {
        let ticket = generation.next()
        isLoading = true
        defer { if generation.isCurrent(ticket) { isLoading = false } }
        do throws(KitError) {
            let page = try await profiles.auditLog(page: PageRequest(cursor: cursor, limit: pageSize))
            guard generation.isCurrent(ticket) else { return }
            entries = cursor == nil ? page.items : entries + page.items
            nextCursor = page.nextCursor
            hasMore = page.nextCursor != nil
            error = nil
        } catch {
            guard generation.isCurrent(ticket), !error.isCancellation else { return }
            self.error = ScreenError(error)
            analytics.track(.operationFailed(feature: .health, reason: error.kind))
        }
    }
}

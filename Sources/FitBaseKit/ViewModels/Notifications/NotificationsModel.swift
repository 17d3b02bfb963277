import FitBaseCore
import Foundation
import Observation

/// The notification feed (seed 004): newest first a page at a time, the unread badge, marking one or all read; while
/// the screen shows (``appear()`` … ``disappear()``) new notifications arrive at the top as the server sends them.
@MainActor @Observable
public final class NotificationsModel {
    /// The notifications loaded so far, newest first.
    public private(set) var notifications: [FeedNotification] = []
    /// Unread notifications in all (the badge).
    public private(set) var unreadCount = 0
    public private(set) var isLoading = false
    public private(set) var isLoadingMore = false
    public private(set) var error: ScreenError?

    private let service: any NotificationService
    private let analytics: any AnalyticsService
    private let pageSize: Int
    @ObservationIgnored private var nextCursor: String?
    @ObservationIgnored private var loaded = false
    @ObservationIgnored private var arrivalsTask: Task<Void, Never>?

    /// A model over the services of `dependencies`, loading `pageSize` notifications a page.
    public init(dependencies: FitBaseDependencies, pageSize: Int = 20) {
        service = dependencies.notifications
        analytics = dependencies.analytics
        self.pageSize = pageSize
    }

    /// Another page follows.
    public var hasMore: Bool { nextCursor != nil }
    /// Loaded, and nothing in the feed.
    public var isEmpty: Bool { loaded && notifications.isEmpty }
    /// The badge's text (`nil`: no badge; "99+" past 99).
    public var badge: String? { unreadCount == 0 ? nil : unreadCount > 99 ? "99+" : String(unreadCount) }

    /// Loads the first page and the unread count.
    public func load() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            let feed = try await service.feed(page: .first(pageSize))
            notifications = feed.page.items
            nextCursor = feed.page.nextCursor
            unreadCount = feed.unreadCount
            loaded = true
            error = nil
        } catch {
            present(error)
        }
    }

    /// Loads the feed and follows new notifications as they arrive (the screen appeared; the badge's owner may keep
    /// one running for the app's life).
    public func appear() async {
        arrivalsTask?.cancel()
        let arrivals = service.arrivals()
        arrivalsTask = Task { [weak self] in
            for await id in arrivals {
                guard let self, !Task.isCancelled else { return }
                await self.receive(id)
            }
        }
        await load()
    }

    /// Stops following new notifications (the screen went away).
    public func disappear() {
        arrivalsTask?.cancel()
        arrivalsTask = nil
    }

    /// The feed is following new notifications.
    public var isLive: Bool { arrivalsTask != nil }

    /// A notification arrived: the top of the feed and the badge are read again (already shown: nothing to do).
    private func receive(_ id: NotificationID) async {
        guard !notifications.contains(where: { $0.id == id }) else { return }
        do throws(KitError) {
            let feed = try await service.feed(page: .first(pageSize))
            let known = Set(notifications.map(\.id))
            let new = feed.page.items.filter { !known.contains($0.id) }
            if notifications.isEmpty { nextCursor = feed.page.nextCursor }
            notifications = new + notifications
            unreadCount = feed.unreadCount
            loaded = true
        } catch {
            present(error)
        }
    }

    /// Refreshes the badge alone (the app came to the foreground).
    public func refreshBadge() async {
        do throws(KitError) {
            unreadCount = try await service.unreadCount()
        } catch {
            present(error)
        }
    }

    /// Loads the next page.
    public func loadMore() async {
        guard let cursor = nextCursor, !isLoadingMore else { return }
        isLoadingMore = true
        defer { isLoadingMore = false }
        do throws(KitError) {
            let feed = try await service.feed(page: PageRequest(cursor: cursor, limit: pageSize))
            let known = Set(notifications.map(\.id))
            notifications += feed.page.items.filter { !known.contains($0.id) }
            nextCursor = feed.page.nextCursor
            unreadCount = feed.unreadCount
            error = nil
        } catch {
            present(error)
        }
    }

    /// The user opened a notification: it is marked read.
    public func open(_ notification: FeedNotification) async {
        analytics.track(.notificationOpened(notification.kind))
        await markRead(notification)
    }

    /// Marks one notification read (at once on screen; put back if the server refuses).
    public func markRead(_ notification: FeedNotification) async {
        guard let index = notifications.firstIndex(where: { $0.id == notification.id }), !notifications[index].isRead else { return }
        notifications[index].isRead = true
        unreadCount = max(0, unreadCount - 1)
        do throws(KitError) {
            try await service.markRead(id: notification.id)
        } catch {
            if let again = notifications.firstIndex(where: { $0.id == notification.id }) { notifications[again].isRead = false }
            unreadCount += 1
            present(error)
        }
    }

    /// Marks every notification read.
    public func markAllRead() async {
        let before = (notifications, unreadCount)
        for index in notifications.indices { notifications[index].isRead = true }
        unreadCount = 0
        do throws(KitError) {
            try await service.markAllRead()
        } catch {
            (notifications, unreadCount) = before
            present(error)
        }
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .notifications, reason: failure.kind))
    }
}

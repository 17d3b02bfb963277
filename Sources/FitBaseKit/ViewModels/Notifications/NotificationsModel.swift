import FitBaseCore
import Foundation
import Observation

/// The notification feed (seed 004): newest first a page at a time, the unread badge, marking one or all read.
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

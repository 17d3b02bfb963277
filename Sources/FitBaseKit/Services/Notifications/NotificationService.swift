import FitBaseCore
import Foundation

/// One entry of the notification feed.
public struct FeedNotification: Sendable, Equatable, Identifiable, Hashable {
    public var id: String
    public var kind: NotificationKind
    /// The group it is about, if any.
    public var groupID: String?
    public var message: String
    public var isRead: Bool
    public var createdAt: Date

    /// Makes a notification.
    public init(id: String, kind: NotificationKind, groupID: String?, message: String, isRead: Bool, createdAt: Date) {
        self.id = id
        self.kind = kind
        self.groupID = groupID
        self.message = message
        self.isRead = isRead
        self.createdAt = createdAt
    }
}

/// A page of the feed with the unread count.
public struct NotificationFeed: Sendable, Equatable {
    public var page: Page<FeedNotification>
    /// Unread notifications in all (the badge).
    public var unreadCount: Int

    /// Makes a feed page.
    public init(page: Page<FeedNotification>, unreadCount: Int) {
        self.page = page
        self.unreadCount = unreadCount
    }
}

/// The notification feed (seed 004): newest first, the unread badge, marking read.
public protocol NotificationService: Sendable {
    /// A page of the feed, newest first.
    func feed(page: PageRequest) async throws(KitError) -> NotificationFeed
    /// Unread notifications in all.
    func unreadCount() async throws(KitError) -> Int
    /// Marks one notification read.
    func markRead(id: String) async throws(KitError)
    /// Marks every notification read.
    func markAllRead() async throws(KitError)
}

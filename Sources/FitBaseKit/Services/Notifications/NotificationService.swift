import FitBaseCore
import Foundation

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
    func markRead(id: NotificationID) async throws(KitError)
    /// Marks every notification read.
    func markAllRead() async throws(KitError)
    /// Each new notification's id as it arrives (over the device's one event stream, while someone is signed in),
    /// until the stream returned is dropped.
    func arrivals() -> AsyncStream<NotificationID>
}

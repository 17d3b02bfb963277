import FitBaseCore
import Foundation

/// An in-memory ``NotificationService``: a feed newest first, paged, with an unread count that marking read lowers.
/// ``deliver(_:)`` adds one, as a live event would.
public actor FakeNotificationService: NotificationService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case feed, unreadCount, markRead, markAllRead
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeNotificationService")
    private let clock: any KitClock
    private var items: [FeedNotification]
    private var observers: [UUID: AsyncStream<NotificationID>.Continuation] = [:]

    /// A fake starting with `notifications`.
    public init(notifications: [FeedNotification] = [], clock: any KitClock = SystemKitClock()) {
        self.items = notifications
        self.clock = clock
    }

    /// Adds a notification at the top of the feed, and announces it to ``arrivals()``.
    public func deliver(_ notification: FeedNotification) {
        items.append(notification)
        for observer in observers.values { observer.yield(notification.id) }
    }

    public nonisolated func arrivals() -> AsyncStream<NotificationID> {
        let (stream, continuation) = AsyncStream<NotificationID>.makeStream(bufferingPolicy: .bufferingNewest(32))
        let id = UUID()
        Task { await self.observe(id, continuation) }
        continuation.onTermination = { _ in Task { await self.stopObserving(id) } }
        return stream
    }

    private func observe(_ id: UUID, _ continuation: AsyncStream<NotificationID>.Continuation) {
        observers[id] = continuation
    }

    private func stopObserving(_ id: UUID) {
        observers[id] = nil
    }

    private var ordered: [FeedNotification] {
        items.sorted { ($0.createdAt, $0.id.description) > ($1.createdAt, $1.id.description) }
    }

    public func feed(page: PageRequest) async throws(KitError) -> NotificationFeed {
        try await knobs.enter(.feed, clock: clock)
        let all = ordered
        let offset = page.cursor.flatMap(Int.init) ?? 0
        let slice = Array(all.dropFirst(offset).prefix(max(page.limit, 0)))
        let next = offset + slice.count < all.count && !slice.isEmpty ? String(offset + slice.count) : nil
        return NotificationFeed(page: Page(items: slice, nextCursor: next), unreadCount: items.filter { !$0.isRead }.count)
    }

    public func unreadCount() async throws(KitError) -> Int {
        try await knobs.enter(.unreadCount, clock: clock)
        return items.filter { !$0.isRead }.count
    }

    public func markRead(id: NotificationID) async throws(KitError) {
        try await knobs.enter(.markRead, clock: clock)
        guard let index = items.firstIndex(where: { $0.id == id }) else {
            throw KitError(.notFound, message: "This notification is no longer available.", code: .notFound)
        }
        items[index].isRead = true
    }

    public func markAllRead() async throws(KitError) {
        try await knobs.enter(.markAllRead, clock: clock)
        for index in items.indices { items[index].isRead = true }
    }
}

import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct NotificationsModelTests {
    @Test func theFeedAndItsBadge() async {
        let fixture = Fixture(.strict)
        fixture.fakes.notifications.knobs.implement(.feed)
        let model = NotificationsModel(dependencies: fixture.dependencies, pageSize: 3)
        await model.load()
        #expect(model.notifications.count == 3 && model.hasMore && model.unreadCount == 2 && model.badge == "2" && !model.isEmpty)
        await model.loadMore()
        #expect(model.notifications.count == 4 && !model.hasMore)
        await model.loadMore()
        #expect(model.notifications.count == 4)
    }

    @Test func openingMarksReadAndMarkAll() async {
        let fixture = Fixture(.strict)
        fixture.fakes.notifications.knobs.implement(.feed, .markRead, .markAllRead, .unreadCount)
        let model = NotificationsModel(dependencies: fixture.dependencies)
        await model.load()
        let unread = model.notifications.first { !$0.isRead }!
        await model.open(unread)
        #expect(model.unreadCount == 1 && model.notifications.first { $0.id == unread.id }?.isRead == true)
        #expect(fixture.events == [.notificationOpened(unread.kind)])
        await model.markRead(unread)
        #expect(model.unreadCount == 1)
        await model.markAllRead()
        #expect(model.unreadCount == 0 && model.badge == nil && model.notifications.allSatisfy(\.isRead))
        await model.refreshBadge()
        #expect(model.unreadCount == 0)
    }

    @Test func aRefusedMarkIsPutBack() async {
        let fixture = Fixture(.strict)
        fixture.fakes.notifications.knobs.implement(.feed, .markRead, .markAllRead)
        fixture.fakes.notifications.knobs.fail(.markRead, with: .offline)
        fixture.fakes.notifications.knobs.fail(.markAllRead, with: .offline)
        let model = NotificationsModel(dependencies: fixture.dependencies)
        await model.load()
        let unread = model.notifications.first { !$0.isRead }!
        await model.markRead(unread)
        #expect(model.unreadCount == 2 && model.notifications.first { $0.id == unread.id }?.isRead == false && model.error?.isOffline == true)
        await model.markAllRead()
        #expect(model.unreadCount == 2 && model.notifications.filter(\.isRead).count == 2)
    }

    @Test func theBadgeCapsAt99() async {
        let fixture = Fixture(.empty)
        fixture.fakes.notifications.knobs.implement(.unreadCount)
        for _ in 0..<120 {
            await fixture.fakes.notifications.deliver(
                FeedNotification(id: NotificationID(), kind: .newMember, group: nil, message: "m", isRead: false, createdAt: fixture.clock.now))
        }
        let model = NotificationsModel(dependencies: fixture.dependencies)
        await model.refreshBadge()
        #expect(model.badge == "99+")
    }

    @Test func emptyAndOffline() async {
        let emptyFixture = Fixture(.empty)
        emptyFixture.fakes.notifications.knobs.implement(.feed)
        let empty = NotificationsModel(dependencies: emptyFixture.dependencies)
        await empty.load()
        #expect(empty.isEmpty && empty.badge == nil)
        let fixture = Fixture(.strict)
        fixture.fakes.notifications.knobs.implement(.feed, .unreadCount)
        fixture.fakes.notifications.knobs.failEverything(with: .offline)
        let model = NotificationsModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error?.isOffline == true && !model.isEmpty && !model.isLoading)
        await model.refreshBadge()
        #expect(fixture.events.count == 2)
    }

    @Test func aFailedNextPageKeepsTheFirst() async {
        let fixture = Fixture(.strict)
        fixture.fakes.notifications.knobs.implement(.feed)
        let model = NotificationsModel(dependencies: fixture.dependencies, pageSize: 2)
        await model.load()
        fixture.fakes.notifications.knobs.failOnce(.feed, with: KitError(.server))
        await model.loadMore()
        #expect(model.error?.kind == .server && model.notifications.count == 2 && model.hasMore)
    }
}

@MainActor @Suite struct NotificationsLiveTests {
    @Test func aNotificationArrivingWhileTheScreenShowsGoesToTheTop() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.notifications.knobs.implement(.feed)
        let model = NotificationsModel(dependencies: fixture.dependencies, pageSize: 3)
        await model.appear()
        #expect(model.isLive && model.notifications.count == 3 && model.unreadCount == 2)
        let arrived = FeedNotification(
            id: NotificationID(), kind: .rankChange, group: try #require(model.notifications.first?.group), message: "Bea overtook you.", isRead: false,
            createdAt: fixture.clock.now)
        await fixture.fakes.notifications.deliver(arrived)
        await eventually { model.notifications.first?.id == arrived.id }
        #expect(model.unreadCount == 3 && model.badge == "3" && model.notifications.count == 4)
        model.disappear()
        #expect(!model.isLive)
        let later = FeedNotification(
            id: NotificationID(), kind: .newMember, group: arrived.group, message: "Cy joined.", isRead: false, createdAt: fixture.clock.now)
        await fixture.fakes.notifications.deliver(later)
        for _ in 0..<1_000 { await Task.yield() }
        #expect(model.notifications.first?.id == arrived.id && fixture.fakes.notifications.knobs.callCount(.feed) == 2)
    }
}

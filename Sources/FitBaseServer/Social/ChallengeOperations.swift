import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// The group's weekly challenges and leaderboards (members only), and the caller's notifications.
/// Membership is checked as the group operations check it (``GroupOperations``).
protocol ChallengeOperations: GroupOperations {}

extension ChallengeOperations {
    func getCurrentChallenges(_ input: Operations.GetCurrentChallenges.Input) async throws -> Operations.GetCurrentChallenges.Output {
        let (group, _) = try await memberGroup(input.path.groupId)
        return .ok(.init(body: .json(.init(items: try await socialFeature.challenges.current(of: group).map(ChallengeWire.wire)))))
    }

    func getLeaderboard(_ input: Operations.GetLeaderboard.Input) async throws -> Operations.GetLeaderboard.Output {
        let caller = try RequestScope.requireCaller()
        let (group, _) = try await memberGroup(input.path.groupId)
        let kind = input.path._type
        guard let challenge = try await socialFeature.challenges.current(of: group).first(where: { $0.kind == kind }) else { throw Problem.notFound("No such challenge.") }
        return .ok(.init(body: .json(try await socialFeature.challenges.boards(of: [challenge], for: caller.user)[0])))
    }

    func listGroupChallenges(_ input: Operations.ListGroupChallenges.Input) async throws -> Operations.ListGroupChallenges.Output {
        let caller = try RequestScope.requireCaller()
        let (group, membership) = try await membership(in: input.path.groupId)
        let zone = LocalCalendar.timeZone(group.timeZone)
        let now = clock.now
        let thisWeek = ChallengeWeek.containing(now, in: zone)
        var week = thisWeek
        if let text = input.query.week {
            guard let day = CalendarDay(text), let wanted = ChallengeWeek(starting: WorkoutStreaks.weekStart(of: day), in: zone) else {
                throw Problem.validationFailed([.init(field: "week", message: "must be a date, YYYY-MM-DD")])
            }
            guard wanted.start <= thisWeek.start else { throw Problem.validationFailed([.init(field: "week", message: "must not be in the future")]) }
            guard wanted.start >= now.addingTimeInterval(-ChallengeScoring.retention) else {
                throw Problem.validationFailed([.init(field: "week", message: "must have started within the last 90 days")])
            }
            week = wanted
        }
        // A week that ended before the caller joined is not theirs to see (its boards name people they never met), as
        // the group's events before their joining are not.
        guard week.end > membership.joinedAt else { return .ok(.init(body: .json(.init(items: [])))) }
        let shown = week == thisWeek ? try await socialFeature.challenges.current(of: group) : try await socialFeature.challenges.existing(of: group.id, in: week)
        return .ok(.init(body: .json(.init(items: try await socialFeature.challenges.boards(of: shown, for: caller.user)))))
    }

    func listNotifications(_ input: Operations.ListNotifications.Input) async throws -> Operations.ListNotifications.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let page = try await socialFeature.notifications.notifications(of: caller.user, now: clock.now, offset: offset, limit: limit + 1)
        return .ok(.init(body: .json(.init(
            items: page.items.prefix(limit).map { item in
                .init(
                    id: item.id.description, _type: item.kind,
                    groupId: item.group?.description, message: item.message, isRead: item.readAt != nil, createdAt: item.createdAt
                )
            },
            nextCursor: page.items.count > limit ? PageRequest.cursor(offset: offset + limit) : nil, unreadCount: page.unread
        ))))
    }

    func markNotificationRead(_ input: Operations.MarkNotificationRead.Input) async throws -> Operations.MarkNotificationRead.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = NotificationID(input.path.notificationId), try await socialFeature.notifications.markRead(id, of: caller.user, now: clock.now) else {
            throw Problem.notFound("No notification \(input.path.notificationId) of yours.")
        }
        return .noContent(.init())
    }

    func markAllNotificationsRead(_ input: Operations.MarkAllNotificationsRead.Input) async throws -> Operations.MarkAllNotificationsRead.Output {
        let caller = try RequestScope.requireCaller()
        try await socialFeature.notifications.markAllRead(of: caller.user, now: clock.now)
        return .noContent(.init())
    }
}

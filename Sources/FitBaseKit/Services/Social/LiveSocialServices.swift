import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``GroupService`` over the generated group and invite operations (``getCurrentGroup``, ``createGroupInvite``,
/// ``acceptInvite`` …); live leaderboards follow the server's event stream.
public struct LiveGroupService: GroupService {
    let client: FitBaseClient
    let parser: DeepLinkParser
    /// Where leaderboard fetches are timed (`leaderboard.fetch`; seed 004's budget is 2 s) and their failures reported.
    var reporter: (any ReportingService)?

    init(client: FitBaseClient, parser: DeepLinkParser, reporter: (any ReportingService)? = nil) {
        self.client = client
        self.parser = parser
        self.reporter = reporter
    }

    public func currentGroup() async throws(KitError) -> SocialGroup? {
        do throws(KitError) {
            return try await client.kitCall(SocialGroup.self) { try await $0.getCurrentGroup().ok.body.json }
        } catch where error.kind == .notFound {
            return nil
        }
    }

    public func createGroup(name: String, timeZone: String) async throws(KitError) -> SocialGroup {
        try await client.kitCall(SocialGroup.self) {
            try await $0.createGroup(body: .json(.init(name: name, timeZone: timeZone))).created.body.json
        }
    }

    public func createInvitation(groupID: GroupID) async throws(KitError) -> GroupInvitation {
        try await client.kitCall(GroupInvitation.self) {
            try await $0.createGroupInvite(path: .init(groupId: groupID.description), body: .json(.init())).created.body.json
        }
    }

    public func previewInvitation(code: String) async throws(KitError) -> InvitationPreview {
        let token = try token(code)
        return try await client.kitCall(InvitationPreview.self) { try await $0.previewInvite(path: .init(token: token)).ok.body.json }
    }

    public func join(code: String) async throws(KitError) -> SocialGroup {
        let token = try token(code)
        return try await client.kitCall(SocialGroup.self) { try await $0.acceptInvite(path: .init(token: token)).ok.body.json }
    }

    /// The invite token of a code or link as typed, pasted or opened.
    private func token(_ text: String) throws(KitError) -> String {
        guard let code = parser.inviteCode(from: text) else {
            throw KitError(
                .invalidInput, message: "That doesn't look like an invite code or link.",
                fieldErrors: ["code": "is not an invite code or link"])
        }
        return code
    }

    public func leave(groupID: GroupID) async throws(KitError) {
        _ = try await client.kitCall { try await $0.leaveGroup(path: .init(groupId: groupID.description)).noContent }
    }

    public func members(groupID: GroupID) async throws(KitError) -> [GroupMember] {
        try await client.kitCall([GroupMember].self) {
            try await $0.listGroupMembers(path: .init(groupId: groupID.description)).ok.body.json.items
        }.sorted(by: GroupMember.listedBefore)
    }

    public func leaderboard(groupID: GroupID, type: LeaderboardType) async throws(KitError) -> GroupLeaderboard {
        let client = self.client
        let fetch = { () async throws(KitError) -> GroupLeaderboard in
            try await kit { () async throws(FitBaseError) in
                try ContractJSON.record(GroupLeaderboard.self, from: try await client.leaderboard(groupId: groupID, type: type))
            }
        }
        guard let reporter else { return try await fetch() }
        return try await reporter.measure("leaderboard.fetch", fetch)
    }

    public func liveLeaderboard(groupID: GroupID, type: LeaderboardType) -> AsyncStream<LeaderboardUpdate> {
        let boards = client.observeLeaderboard(groupId: groupID, type: type)
        let (stream, continuation) = AsyncStream<LeaderboardUpdate>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let reporter = self.reporter
        let task = Task {
            // The first board's arrival is the screen's fetch (`leaderboard.fetch`); later ones are live updates.
            var fetchStarted: ContinuousClock.Instant? = .now
            do throws(FitBaseError) {
                for try await board in boards {
                    continuation.yield(.board(try ContractJSON.record(GroupLeaderboard.self, from: board)))
                    if let start = fetchStarted {
                        reporter?.trace("leaderboard.fetch", milliseconds: ReportedTime.milliseconds(since: start))
                        fetchStarted = nil
                    }
                }
            } catch {
                if !Task.isCancelled {
                    if fetchStarted != nil { reporter?.error(KitError(error).kind, at: "leaderboard.fetch") }
                    continuation.yield(.ended(KitError(error)))
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func leaderboards(groupID: GroupID, week: CalendarDay?) async throws(KitError) -> [GroupLeaderboard] {
        let client = self.client
        let fetch = { () async throws(KitError) -> [GroupLeaderboard] in
            try await client.kitCall([GroupLeaderboard].self) {
                try await $0.listGroupChallenges(path: .init(groupId: groupID.description), query: .init(week: week?.description))
                    .ok.body.json.items
            }
        }
        guard let reporter else { return try await fetch() }
        return try await reporter.measure("leaderboard.fetch", fetch)
    }

    public func removeMember(groupID: GroupID, member: UserID) async throws(KitError) {
        let path = Operations.RemoveGroupMember.Input.Path(groupId: groupID.description, userId: member.description)
        _ = try await client.kitCall { try await $0.removeGroupMember(path: path).noContent }
    }

    public func deleteGroup(groupID: GroupID) async throws(KitError) {
        _ = try await client.kitCall { try await $0.deleteGroup(path: .init(groupId: groupID.description)).noContent }
    }

    public func invitations(groupID: GroupID) async throws(KitError) -> [InvitationInfo] {
        try await client.kitCall([InvitationInfo].self) {
            try await $0.listGroupInvites(path: .init(groupId: groupID.description)).ok.body.json.items
        }
    }

    public func revokeInvitation(groupID: GroupID, id: InviteID) async throws(KitError) {
        let path = Operations.RevokeGroupInvite.Input.Path(groupId: groupID.description, inviteId: id.description)
        _ = try await client.kitCall { try await $0.revokeGroupInvite(path: path).noContent }
    }
}

/// ``NotificationService`` over ``listNotifications``, ``markNotificationRead`` and ``markAllNotificationsRead``.
public struct LiveNotificationService: NotificationService {
    let client: FitBaseClient
    /// Holds the device's one event stream, whose `notification` events are the arrivals.
    let sync: SyncRunner

    init(client: FitBaseClient, sync: SyncRunner) {
        self.client = client
        self.sync = sync
    }

    public func feed(page: PageRequest) async throws(KitError) -> NotificationFeed {
        let body = try await client.kitCall { try await $0.listNotifications(query: .init(limit: page.limit, cursor: page.cursor)).ok.body.json }
        let items = try await kit { () async throws(FitBaseError) in try ContractJSON.record([FeedNotification].self, from: body.items) }
        return NotificationFeed(page: Page(items: items, nextCursor: body.nextCursor), unreadCount: body.unreadCount)
    }

    public func unreadCount() async throws(KitError) -> Int {
        try await feed(page: PageRequest(limit: 1)).unreadCount
    }

    public func markRead(id: NotificationID) async throws(KitError) {
        let path = Operations.MarkNotificationRead.Input.Path(notificationId: id.description)
        _ = try await client.kitCall { try await $0.markNotificationRead(path: path).noContent }
    }

    public func markAllRead() async throws(KitError) {
        _ = try await client.kitCall { try await $0.markAllNotificationsRead().noContent }
    }

    public func arrivals() -> AsyncStream<NotificationID> {
        sync.notificationArrivals()
    }
}

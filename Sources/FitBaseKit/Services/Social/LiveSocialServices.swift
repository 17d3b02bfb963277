import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import HTTPTypes

/// ``GroupService`` over `/v1/groups` and `/v1/invites`; live leaderboards follow the server's event stream.
public struct LiveGroupService: GroupService {
    let client: FitBaseClient
    let api: ServerAPI
    let parser: DeepLinkParser
    /// Where leaderboard fetches are timed (`leaderboard.fetch`; seed 004's budget is 2 s) and their failures reported.
    var reporter: (any ReportingService)? = nil

    public func currentGroup() async throws(KitError) -> SocialGroup? {
        do throws(KitError) {
            return try await api.get(SocialGroup.self, "/v1/groups/current", operationID: "getCurrentGroup")
        } catch where error.kind == .notFound {
            return nil
        }
    }

    public func createGroup(name: String, timeZone: String) async throws(KitError) -> SocialGroup {
        let group = try await api.send(
            .post, "/v1/groups", json: Components.Schemas.GroupInput(name: name, timeZone: timeZone), as: SocialGroup.self,
            operationID: "createGroup")
        return group
    }

    public func createInvitation(groupID: GroupID) async throws(KitError) -> GroupInvitation {
        let invite = try await api.send(
            .post, "/v1/groups/\(groupID)/invites", json: Components.Schemas.GroupInviteInput(), as: Components.Schemas.GroupInvite.self,
            operationID: "createGroupInvite")
        guard let url = URL(string: invite.url), let deepLink = URL(string: invite.deepLink) else { throw KitError(.server) }
        return GroupInvitation(
            id: try InviteID(wire: invite.id), code: invite.token, url: url, deepLink: deepLink, expiresAt: invite.expiresAt, maxUses: invite.maxUses, useCount: invite.useCount)
    }

    public func previewInvitation(code: String) async throws(KitError) -> InvitationPreview {
        let preview = try await api.get(Components.Schemas.InvitePreview.self, "/v1/invites/\(ServerAPI.segment(try token(code)))", operationID: "previewInvite")
        return InvitationPreview(groupID: try GroupID(wire: preview.groupId), groupName: preview.groupName, memberCount: preview.memberCount, isFull: preview.isFull)
    }

    public func join(code: String) async throws(KitError) -> SocialGroup {
        let group = try await api.send(
            .post, "/v1/invites/\(ServerAPI.segment(try token(code)))/accept", json: ServerAPI.Empty(), as: SocialGroup.self,
            operationID: "acceptInvite")
        return group
    }

    /// The invite token of a code or link as typed, pasted or opened.
    private func token(_ text: String) throws(KitError) -> String {
        guard let code = parser.inviteCode(from: text) else {
            throw KitError(.invalidInput, message: "That doesn't look like an invite code or link.", fieldErrors: ["code": "is not an invite code or link"])
        }
        return code
    }

    public func leave(groupID: GroupID) async throws(KitError) {
        try await api.send(.post, "/v1/groups/\(groupID)/leave", json: ServerAPI.Empty(), operationID: "leaveGroup")
    }

    public func members(groupID: GroupID) async throws(KitError) -> [GroupMember] {
        try await api.get(MemberList.self, "/v1/groups/\(groupID)/members", operationID: "listGroupMembers").items.sorted(by: GroupMember.listedBefore)
    }

    /// The body of `listGroupMembers`: the contract's `GroupMemberList`, of Core's members.
    private struct MemberList: Decodable {
        var items: [GroupMember]
    }

    public func leaderboard(groupID: GroupID, type: LeaderboardType) async throws(KitError) -> GroupLeaderboard {
        let client = self.client
        let fetch = { () async throws(KitError) -> GroupLeaderboard in
            try GroupLeaderboard(wire: try await kit { () async throws(FitBaseError) in try await client.leaderboard(groupId: groupID, type: type) })
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
                    do throws(KitError) {
                        continuation.yield(.board(try GroupLeaderboard(wire: board)))
                        if let start = fetchStarted {
                            reporter?.trace("leaderboard.fetch", milliseconds: ReportedTime.milliseconds(since: start))
                            fetchStarted = nil
                        }
                    } catch {
                        continuation.yield(.ended(error))
                        break
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
        let query = week.map { [URLQueryItem(name: "week", value: $0.description)] } ?? []
        let api = self.api
        let fetch = { () async throws(KitError) -> [GroupLeaderboard] in
            let list = try await api.get(Components.Schemas.LeaderboardList.self, "/v1/groups/\(groupID)/challenges", query: query, operationID: "listGroupChallenges")
            var boards: [GroupLeaderboard] = []
            for board in list.items { boards.append(try GroupLeaderboard(wire: board)) }
            return boards
        }
        guard let reporter else { return try await fetch() }
        return try await reporter.measure("leaderboard.fetch", fetch)
    }

    public func removeMember(groupID: GroupID, member: UserID) async throws(KitError) {
        try await api.send(.delete, "/v1/groups/\(groupID)/members/\(member)", operationID: "removeGroupMember")
    }

    public func deleteGroup(groupID: GroupID) async throws(KitError) {
        try await api.send(.delete, "/v1/groups/\(groupID)", operationID: "deleteGroup")
    }

    public func invitations(groupID: GroupID) async throws(KitError) -> [InvitationInfo] {
        let list = try await api.get(Components.Schemas.GroupInviteList.self, "/v1/groups/\(groupID)/invites", operationID: "listGroupInvites")
        var invitations: [InvitationInfo] = []
        for invite in list.items {
            invitations.append(InvitationInfo(
                id: try InviteID(wire: invite.id), createdBy: try UserID(wire: invite.createdBy), createdAt: invite.createdAt,
                expiresAt: invite.expiresAt, maxUses: invite.maxUses, useCount: invite.useCount))
        }
        return invitations
    }

    public func revokeInvitation(groupID: GroupID, id: InviteID) async throws(KitError) {
        try await api.send(.delete, "/v1/groups/\(groupID)/invites/\(id)", operationID: "revokeGroupInvite")
    }
}

/// ``NotificationService`` over `/v1/notifications`.
public struct LiveNotificationService: NotificationService {
    let api: ServerAPI
    /// Holds the device's one event stream, whose `notification` events are the arrivals.
    let sync: SyncRunner

    public func feed(page: PageRequest) async throws(KitError) -> NotificationFeed {
        var query = [URLQueryItem(name: "limit", value: String(page.limit))]
        if let cursor = page.cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
        let body = try await api.get(NotificationPage.self, "/v1/notifications", query: query, operationID: "listNotifications")
        return NotificationFeed(page: Page(items: body.items, nextCursor: body.nextCursor), unreadCount: body.unreadCount)
    }

    /// The body of `listNotifications`: the contract's `NotificationPage`, of Core's notifications.
    private struct NotificationPage: Decodable {
        var items: [FeedNotification]
        var nextCursor: String?
        var unreadCount: Int
    }

    public func unreadCount() async throws(KitError) -> Int {
        try await feed(page: PageRequest(limit: 1)).unreadCount
    }

    public func markRead(id: NotificationID) async throws(KitError) {
        try await api.send(.post, "/v1/notifications/\(id)/read", json: ServerAPI.Empty(), operationID: "markNotificationRead")
    }

    public func markAllRead() async throws(KitError) {
        try await api.send(.post, "/v1/notifications/read-all", json: ServerAPI.Empty(), operationID: "markAllNotificationsRead")
    }

    public func arrivals() -> AsyncStream<NotificationID> {
        sync.notificationArrivals()
    }
}

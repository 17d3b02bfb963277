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
        try GroupLeaderboard(wire: try await kit { () async throws(FitBaseError) in try await client.leaderboard(groupId: groupID, type: type) })
    }

    public func liveLeaderboard(groupID: GroupID, type: LeaderboardType) -> AsyncStream<LeaderboardUpdate> {
        let boards = client.observeLeaderboard(groupId: groupID, type: type)
        let (stream, continuation) = AsyncStream<LeaderboardUpdate>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let task = Task {
            do throws(FitBaseError) {
                for try await board in boards {
                    do throws(KitError) {
                        continuation.yield(.board(try GroupLeaderboard(wire: board)))
                    } catch {
                        continuation.yield(.ended(error))
                        break
                    }
                }
            } catch {
                if !Task.isCancelled { continuation.yield(.ended(KitError(error))) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func leaderboards(groupID: GroupID, week: CalendarDay?) async throws(KitError) -> [GroupLeaderboard] {
        let query = week.map { [URLQueryItem(name: "week", value: $0.description)] } ?? []
        let list = try await api.get(Components.Schemas.LeaderboardList.self, "/v1/groups/\(groupID)/challenges", query: query, operationID: "listGroupChallenges")
        var boards: [GroupLeaderboard] = []
        for board in list.items { boards.append(try GroupLeaderboard(wire: board)) }
        return boards
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
        let events = api.client.events()
        let (stream, continuation) = AsyncStream<NotificationID>.makeStream(bufferingPolicy: .bufferingNewest(32))
        let task = Task {
            do throws(FitBaseError) {
                for try await event in events {
                    if case .notification(let id, _, _) = event.kind { continuation.yield(id) }
                }
            } catch {
                // The session ended or the server refused the stream: no more arrivals.
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// ``HealthService`` over `/v1/health/summary` (the server decrypts, summarises in the user's time zone and audits).
/// Values are never cached on the device nor passed to analytics.
public struct LiveHealthService: HealthService {
    let api: ServerAPI
    let clock: any KitClock

    public func summaries(days: Int) async throws(KitError) -> [HealthMetricSummary] {
        guard days > 0 else { throw KitError(.invalidInput, fieldErrors: ["days": "must be at least 1"]) }
        let to = clock.now
        let from = to.addingTimeInterval(-Double(days) * 86_400)
        var summaries: [HealthMetricSummary] = []
        for metric in HealthSampleType.allCases {
            let buckets = try await summary(metric, bucket: .day, from: from, to: to).buckets
            summaries.append(Self.summary(metric, buckets))
        }
        return summaries
    }

    public func series(_ metric: HealthSampleType, bucket: HealthBucket, from: Date, to: Date) async throws(KitError) -> [ChartPoint] {
        guard from < to else { throw KitError(.invalidInput, fieldErrors: ["from": "must be before to"]) }
        return try await summary(metric, bucket: bucket, from: from, to: to).buckets.compactMap { bucket in
            guard let day = CalendarDay(bucket.start) else { return nil }
            let figures = Self.figures(metric, bucket)
            return ChartPoint(day: day, value: figures.value, low: figures.low, high: figures.high)
        }
    }

    private func summary(_ metric: HealthSampleType, bucket: HealthBucket, from: Date, to: Date) async throws(KitError) -> Components.Schemas.HealthSummary {
        try await api.get(
            Components.Schemas.HealthSummary.self, "/v1/health/summary",
            query: [
                URLQueryItem(name: "type", value: metric.rawValue), URLQueryItem(name: "bucket", value: bucket.rawValue),
                URLQueryItem(name: "from", value: InternetDateTime.string(from: from)), URLQueryItem(name: "to", value: InternetDateTime.string(from: to)),
            ],
            operationID: "getHealthSummary")
    }

    /// A bucket's figure and range: the average with min and max; steps' sum; hours asleep; blood pressure's average
    /// systolic with the average diastolic as `low` and the highest systolic as `high`.
    private static func figures(_ metric: HealthSampleType, _ bucket: Components.Schemas.HealthSummaryBucket) -> (value: Double?, low: Double?, high: Double?) {
        switch metric {
        case .steps: (bucket.sum, nil, nil)
        case .sleep: (bucket.asleepSeconds.map { $0 / 3_600 }, nil, nil)
        case .bloodPressure: (bucket.systolic?.average, bucket.diastolic?.average, bucket.systolic?.max)
        case .heartRate, .oxygenSaturation: (bucket.value?.average, bucket.value?.min, bucket.value?.max)
        }
    }

    private static func summary(_ metric: HealthSampleType, _ buckets: [Components.Schemas.HealthSummaryBucket]) -> HealthMetricSummary {
        let count = buckets.reduce(0) { $0 + $1.sampleCount }
        let unit = HealthMetricSummary.unit(of: metric)
        switch metric {
        case .steps, .sleep:
            let daily = buckets.compactMap { figures(metric, $0).value }
            return HealthMetricSummary(
                metric: metric, sampleCount: count, average: daily.isEmpty ? nil : daily.reduce(0, +) / Double(daily.count), minimum: daily.min(),
                maximum: daily.max(), unit: unit)
        case .bloodPressure:
            let systolic = buckets.compactMap(\.systolic)
            let diastolic = buckets.compactMap(\.diastolic)
            return HealthMetricSummary(
                metric: metric, sampleCount: count, average: weighted(systolic), minimum: systolic.map(\.min).min(), maximum: systolic.map(\.max).max(),
                secondaryAverage: weighted(diastolic), unit: unit)
        case .heartRate, .oxygenSaturation:
            let values = buckets.compactMap(\.value)
            return HealthMetricSummary(
                metric: metric, sampleCount: count, average: weighted(values), minimum: values.map(\.min).min(), maximum: values.map(\.max).max(), unit: unit)
        }
    }

    /// The average over buckets, each weighted by its sample count.
    private static func weighted(_ statistics: [Components.Schemas.HealthStatistic]) -> Double? {
        let count = statistics.reduce(0) { $0 + $1.count }
        guard count > 0 else { return nil }
        return statistics.reduce(0) { $0 + $1.average * Double($1.count) } / Double(count)
    }
}

import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``GroupService``: one group at most, invitations with codes, members, and leaderboards whose scores
/// move with ``checkIn(userID:)`` — live subscribers get the new board at once.
public actor FakeGroupService: GroupService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case currentGroup, createGroup, createInvitation, previewInvitation, join, leave, members, leaderboard, leaderboards, removeMember, deleteGroup
        case invitations, revokeInvitation
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeGroupService")
    private let clock: any KitClock
    private let parser: DeepLinkParser
    private let userID: UserID
    private var group: SocialGroup?
    private var memberList: [GroupMember] = []
    private var checkIns: [UserID: Int] = [:]
    private var streaks: [UserID: Int] = [:]
    /// When each member last scored (what orders equal values, as on the server).
    private var scoredAt: [UserID: Date] = [:]
    /// Codes that can be joined, and the group each leads to (with its members before joining).
    private var invitations: [String: (group: SocialGroup, members: [GroupMember])] = [:]
    /// The invitations made in this group, newest last, with their codes.
    private var issued: [(code: String, info: InvitationInfo)] = []
    private var observers: [UUID: (type: LeaderboardType, continuation: AsyncStream<LeaderboardUpdate>.Continuation)] = [:]

    /// An invite code to the canned group "Evening Crew" (three members), joinable while the user is in no group.
    public static let sampleInviteCode = "evening-crew-2026"

    /// A fake for the user `userID`, in `group` with `members` (none: in no group).
    public init(
        userID: UserID = FakeData.user.id, group: SocialGroup? = nil, members: [GroupMember] = [], parser: DeepLinkParser = DeepLinkParser(),
        clock: any KitClock = SystemKitClock()
    ) {
        self.userID = userID
        self.group = group
        self.memberList = members
        self.parser = parser
        self.clock = clock
        for (index, member) in members.enumerated() {
            checkIns[member.user] = (members.count - index) % 5 + 1
            streaks[member.user] = (index * 2) % 4 + 1
        }
        let crew = SocialGroup(
            id: GroupID(rawValue: FakeData.uuid(0x610)), name: "Evening Crew", timeZone: "UTC", memberCount: 3,
            createdAt: clock.now.addingTimeInterval(-10 * 86_400), role: .member
        )
        let crewMembers = ["Fay", "Gia", "Hana"].enumerated().map { index, name in
            GroupMember(
                user: UserID(rawValue: FakeData.uuid(0x620 + index)), displayName: name, role: index == 0 ? .admin : .member,
                joinedAt: crew.createdAt)
        }
        invitations[Self.sampleInviteCode] = (crew, crewMembers)
    }

    public func currentGroup() async throws(KitError) -> SocialGroup? {
        try await knobs.enter(.currentGroup, clock: clock)
        return group
    }

    public func createGroup(name: String, timeZone: String) async throws(KitError) -> SocialGroup {
        try await knobs.enter(.createGroup, clock: clock)
        let trimmed: String
        do throws(InvalidFields) { trimmed = try GroupRules.checked(name: name, timeZone: timeZone).name } catch { throw KitError(error) }
        guard group == nil else { throw KitError(.conflict, message: "You're already in a group. Leave it to create another.", code: .alreadyInGroup) }
        let created = SocialGroup(id: GroupID(), name: trimmed, timeZone: timeZone, memberCount: 1, createdAt: clock.now, role: .admin)
        group = created
        memberList = [GroupMember(user: userID, displayName: FakeData.user.displayName ?? "You", role: .admin, joinedAt: clock.now)]
        checkIns = [userID: 0]
        streaks = [userID: 0]
        scoredAt = [:]
        return created
    }

    public func createInvitation(groupID: GroupID) async throws(KitError) -> GroupInvitation {
        try await knobs.enter(.createInvitation, clock: clock)
        let group = try ownGroup(groupID)
        guard group.role == .admin else { throw KitError(.forbidden, message: "Only the group's admin can invite.", code: .forbidden) }
        let code = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        invitations[code] = (group, memberList)
        let info = InvitationInfo(
            id: InviteID(), createdBy: userID, createdAt: clock.now, expiresAt: clock.now.addingTimeInterval(7 * 86_400), maxUses: nil, useCount: 0)
        issued.append((code, info))
        return GroupInvitation(
            id: info.id, code: code, url: URL(string: "https://fitbase.example.com/group/invite/\(code)")!,
            deepLink: URL(string: "\(parser.appScheme)://group/invite/\(code)")!, createdAt: info.createdAt, expiresAt: info.expiresAt,
            maxUses: nil, useCount: 0
        )
    }

    public func previewInvitation(code: String) async throws(KitError) -> InvitationPreview {
        try await knobs.enter(.previewInvitation, clock: clock)
        let invitation = try invitation(code)
        let group = invitation.group
        return InvitationPreview(groupID: group.id, groupName: group.name, memberCount: invitation.members.count, isFull: invitation.members.count >= GroupRules.maximumMembers)
    }

    public func join(code: String) async throws(KitError) -> SocialGroup {
        try await knobs.enter(.join, clock: clock)
        let invitation = try invitation(code)
        if group?.id == invitation.group.id { throw KitError(.conflict, message: "You're already in this group.", code: .alreadyInGroup) }
        guard group == nil else { throw KitError(.conflict, message: "You're already in a group. Leave it to join another.", code: .alreadyInGroup) }
        guard invitation.members.count < GroupRules.maximumMembers else {
            throw KitError(.conflict, message: "This group is full (10 members).", code: .groupFull)
        }
        var joined = invitation.group
        joined.role = .member
        joined.memberCount = invitation.members.count + 1
        group = joined
        memberList = invitation.members + [GroupMember(user: userID, displayName: FakeData.user.displayName ?? "You", role: .member, joinedAt: clock.now)]
        checkIns = Dictionary(uniqueKeysWithValues: memberList.enumerated().map { ($1.user, $0 % 3) })
        streaks = Dictionary(uniqueKeysWithValues: memberList.map { ($0.user, 0) })
        scoredAt = [:]
        return joined
    }

    public func leave(groupID: GroupID) async throws(KitError) {
        try await knobs.enter(.leave, clock: clock)
        _ = try ownGroup(groupID)
        endMembership()
    }

    /// The user is in no group any more: live boards end.
    private func endMembership() {
        group = nil
        memberList = []
        checkIns = [:]
        streaks = [:]
        scoredAt = [:]
        for observer in observers.values {
            observer.continuation.yield(.ended(KitError(.notFound, message: "You're no longer in this group.", code: .notFound)))
            observer.continuation.finish()
        }
        observers = [:]
    }

    public func members(groupID: GroupID) async throws(KitError) -> [GroupMember] {
        try await knobs.enter(.members, clock: clock)
        _ = try ownGroup(groupID)
        return memberList.sorted(by: GroupMember.listedBefore)
    }

    public func leaderboard(groupID: GroupID, type: LeaderboardType) async throws(KitError) -> GroupLeaderboard {
        try await knobs.enter(.leaderboard, clock: clock)
        _ = try ownGroup(groupID)
        return board(type)
    }

    public func leaderboards(groupID: GroupID, week: CalendarDay?) async throws(KitError) -> [GroupLeaderboard] {
        try await knobs.enter(.leaderboards, clock: clock)
        _ = try ownGroup(groupID)
        let thisWeek = WorkoutStreaks.weekStart(of: CalendarDay(clock.now, in: .gmt))
        guard let week else { return [board(.checkIns), board(.streak)] }
        let wanted = WorkoutStreaks.weekStart(of: week)
        if week > CalendarDay(clock.now, in: .gmt) || week < CalendarDay(clock.now, in: .gmt).adding(days: -90) {
            throw KitError(.invalidInput, fieldErrors: ["week": "must be within the last 90 days"])
        }
        // The fake keeps this week's scores only: earlier weeks had no challenge.
        return wanted == thisWeek ? [board(.checkIns), board(.streak)] : []
    }

    public func removeMember(groupID: GroupID, member: UserID) async throws(KitError) {
        try await knobs.enter(.removeMember, clock: clock)
        var group = try adminGroup(groupID)
        guard member != userID else { throw KitError(.invalidInput, message: "Leave the group instead.", fieldErrors: ["userId": "is you"]) }
        guard memberList.contains(where: { $0.user == member }) else { throw KitError(.notFound, message: "Not a member of this group.", code: .notFound) }
        memberList.removeAll { $0.user == member }
        (checkIns[member], streaks[member], scoredAt[member]) = (nil, nil, nil)
        group.memberCount = memberList.count
        self.group = group
        publishBoards()
    }

    public func deleteGroup(groupID: GroupID) async throws(KitError) {
        try await knobs.enter(.deleteGroup, clock: clock)
        _ = try adminGroup(groupID)
        for (code, _) in issued { invitations[code] = nil }
        issued = []
        endMembership()
    }

    public func invitations(groupID: GroupID) async throws(KitError) -> [InvitationInfo] {
        try await knobs.enter(.invitations, clock: clock)
        _ = try adminGroup(groupID)
        return issued.map(\.info).filter { $0.expiresAt > clock.now }.reversed()
    }

    public func revokeInvitation(groupID: GroupID, id: InviteID) async throws(KitError) {
        try await knobs.enter(.revokeInvitation, clock: clock)
        let group = try ownGroup(groupID)
        guard let index = issued.firstIndex(where: { $0.info.id == id }) else {
            throw KitError(.notFound, message: "This invite no longer exists.", code: .notFound)
        }
        guard group.role == .admin || issued[index].info.createdBy == userID else {
            throw KitError(.forbidden, message: "Only the group's admin or the invite's maker can revoke it.", code: .forbidden)
        }
        invitations[issued[index].code] = nil
        issued.remove(at: index)
    }

    public nonisolated func liveLeaderboard(groupID: GroupID, type: LeaderboardType) -> AsyncStream<LeaderboardUpdate> {
        let (stream, continuation) = AsyncStream<LeaderboardUpdate>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let id = UUID()
        let task = Task {
            do throws(KitError) {
                let first = try await self.leaderboard(groupID: groupID, type: type)
                await self.observe(id, type: type, continuation: continuation, first: first)
            } catch {
                continuation.yield(.ended(error))
                continuation.finish()
            }
        }
        continuation.onTermination = { _ in
            task.cancel()
            Task { await self.stopObserving(id) }
        }
        return stream
    }

    private func observe(_ id: UUID, type: LeaderboardType, continuation: AsyncStream<LeaderboardUpdate>.Continuation, first: GroupLeaderboard) {
        continuation.yield(.board(first))
        observers[id] = (type, continuation)
    }

    private func stopObserving(_ id: UUID) {
        observers[id] = nil
    }

    /// A member logs a workout: their check-ins and streak go up and live boards are pushed.
    public func checkIn(userID member: UserID) {
        guard memberList.contains(where: { $0.user == member }) else { return }
        checkIns[member, default: 0] += 1
        streaks[member, default: 0] += 1
        scoredAt[member] = clock.now
        publishBoards()
    }

    private func publishBoards() {
        for observer in observers.values { observer.continuation.yield(.board(board(observer.type))) }
    }

    private func adminGroup(_ id: GroupID) throws(KitError) -> SocialGroup {
        let group = try ownGroup(id)
        guard group.role == .admin else { throw KitError(.forbidden, message: "Only the group's admin can do that.", code: .forbidden) }
        return group
    }

    private func ownGroup(_ id: GroupID) throws(KitError) -> SocialGroup {
        guard let group, group.id == id else { throw KitError(.notFound, message: "You're not in this group.", code: .notFound) }
        return group
    }

    private func invitation(_ text: String) throws(KitError) -> (group: SocialGroup, members: [GroupMember]) {
        guard let code = parser.inviteCode(from: text) ?? (text.isEmpty ? nil : text), let invitation = invitations[code] else {
            throw KitError(.notFound, message: "This invite has expired or doesn't exist. Ask for a new one.", code: .notFound)
        }
        return invitation
    }

    /// The board of `type`, ranked by Core's ``LeaderboardRanker`` as the server ranks it.
    private func board(_ type: LeaderboardType) -> GroupLeaderboard {
        let scores = type == .checkIns ? checkIns : streaks
        let members = Dictionary(memberList.map { ($0.user, $0) }, uniquingKeysWith: { first, _ in first })
        let standings = memberList.map { member in
            LeaderboardStanding(user: member.user, value: scores[member.user] ?? 0, reachedAt: scoredAt[member.user] ?? member.joinedAt)
        }
        let rows = LeaderboardRanker.rank(standings).compactMap { ranked -> LeaderboardEntry? in
            guard let member = members[ranked.standing.user] else { return nil }
            return LeaderboardEntry(
                user: member.user, displayName: member.displayName, photoURL: member.photoURL, value: ranked.standing.value, rank: ranked.rank,
                reachedAt: ranked.standing.reachedAt)
        }
        let today = CalendarDay(clock.now, in: .gmt)
        let monday = WorkoutStreaks.weekStart(of: today)
        // One challenge per week and type, its id the same each time it is read (as the server's row).
        let challenge = WeeklyChallenge(
            id: ChallengeID(rawValue: FakeData.uuid(0x7_0000 + monday.daysSince1970 * 2 + (type == .checkIns ? 0 : 1))),
            group: group?.id ?? GroupID(), type: type, weekStart: monday, startsAt: monday.start(in: .gmt),
            endsAt: monday.adding(days: 7).start(in: .gmt).addingTimeInterval(-1), isActive: true
        )
        return GroupLeaderboard(challenge: challenge, rows: rows, currentUser: rows.first { $0.user == userID })
    }
}

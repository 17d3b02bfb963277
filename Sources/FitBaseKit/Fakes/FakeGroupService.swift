import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``GroupService``: one group at most, invitations with codes, members, and leaderboards whose scores
/// move with ``checkIn(userID:)`` — live subscribers get the new board at once.
public actor FakeGroupService: GroupService {
    /// Latency and failures (operation names: `currentGroup`, `createGroup`, `createInvitation`, `previewInvitation`,
    /// `join`, `leave`, `members`, `leaderboard`, `liveLeaderboard`).
    public nonisolated let knobs = FakeKnobs()
    private let clock: any KitClock
    private let parser: DeepLinkParser
    private let userID: String
    private var group: SocialGroup?
    private var memberList: [GroupMember] = []
    private var checkIns: [String: Int] = [:]
    private var streaks: [String: Int] = [:]
    /// Codes that can be joined, and the group each leads to (with its members before joining).
    private var invitations: [String: (group: SocialGroup, members: [GroupMember])] = [:]
    private var observers: [UUID: (type: LeaderboardType, continuation: AsyncStream<LeaderboardUpdate>.Continuation)] = [:]

    /// An invite code to the canned group "Evening Crew" (three members), joinable while the user is in no group.
    public static let sampleInviteCode = "evening-crew-2026"

    /// A fake for the user `userID`, in `group` with `members` (none: in no group).
    public init(
        userID: String = FakeData.user.id, group: SocialGroup? = nil, members: [GroupMember] = [], parser: DeepLinkParser = DeepLinkParser(),
        clock: any KitClock = SystemKitClock()
    ) {
        self.userID = userID
        self.group = group
        self.memberList = members
        self.parser = parser
        self.clock = clock
        for (index, member) in members.enumerated() {
            checkIns[member.userID] = (members.count - index) % 5 + 1
            streaks[member.userID] = (index * 2) % 4 + 1
        }
        let crew = SocialGroup(
            id: FakeData.uuid(0x610).uuidString.lowercased(), name: "Evening Crew", timeZone: "UTC", memberCount: 3, role: .member,
            createdAt: clock.now.addingTimeInterval(-10 * 86_400)
        )
        let crewMembers = ["Fay", "Gia", "Hana"].enumerated().map { index, name in
            GroupMember(
                userID: FakeData.uuid(0x620 + index).uuidString.lowercased(), displayName: name, role: index == 0 ? .admin : .member,
                joinedAt: crew.createdAt)
        }
        invitations[Self.sampleInviteCode] = (crew, crewMembers)
    }

    public func currentGroup() async throws(KitError) -> SocialGroup? {
        try await knobs.enter("currentGroup", clock: clock)
        return group
    }

    public func createGroup(name: String, timeZone: String) async throws(KitError) -> SocialGroup {
        try await knobs.enter("createGroup", clock: clock)
        let trimmed: String
        do throws(InvalidFields) { trimmed = try GroupRules.checked(name: name, timeZone: timeZone).name } catch { throw KitError(error) }
        guard group == nil else { throw KitError(.conflict, message: "You're already in a group. Leave it to create another.", code: ProblemCode.alreadyInGroup.rawValue) }
        let created = SocialGroup(id: UUID().uuidString.lowercased(), name: trimmed, timeZone: timeZone, memberCount: 1, role: .admin, createdAt: clock.now)
        group = created
        memberList = [GroupMember(userID: userID, displayName: FakeData.user.displayName ?? "You", role: .admin, joinedAt: clock.now)]
        checkIns = [userID: 0]
        streaks = [userID: 0]
        return created
    }

    public func createInvitation(groupID: String) async throws(KitError) -> GroupInvitation {
        try await knobs.enter("createInvitation", clock: clock)
        let group = try ownGroup(groupID)
        guard group.role == .admin else { throw KitError(.forbidden, message: "Only the group's admin can invite.", code: "forbidden") }
        let code = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        invitations[code] = (group, memberList)
        return GroupInvitation(
            id: UUID().uuidString.lowercased(), code: code, url: URL(string: "https://fitbase.example.com/group/invite/\(code)")!,
            deepLink: URL(string: "\(parser.appScheme)://group/invite/\(code)")!, expiresAt: clock.now.addingTimeInterval(7 * 86_400), maxUses: nil,
            useCount: 0
        )
    }

    public func previewInvitation(code: String) async throws(KitError) -> InvitationPreview {
        try await knobs.enter("previewInvitation", clock: clock)
        let invitation = try invitation(code)
        let group = invitation.group
        return InvitationPreview(groupID: group.id, groupName: group.name, memberCount: invitation.members.count, isFull: invitation.members.count >= SocialGroup.maximumMembers)
    }

    public func join(code: String) async throws(KitError) -> SocialGroup {
        try await knobs.enter("join", clock: clock)
        let invitation = try invitation(code)
        if group?.id == invitation.group.id { throw KitError(.conflict, message: "You're already in this group.", code: ProblemCode.alreadyInGroup.rawValue) }
        guard group == nil else { throw KitError(.conflict, message: "You're already in a group. Leave it to join another.", code: ProblemCode.alreadyInGroup.rawValue) }
        guard invitation.members.count < SocialGroup.maximumMembers else {
            throw KitError(.conflict, message: "This group is full (10 members).", code: ProblemCode.groupFull.rawValue)
        }
        var joined = invitation.group
        joined.role = .member
        joined.memberCount = invitation.members.count + 1
        group = joined
        memberList = invitation.members + [GroupMember(userID: userID, displayName: FakeData.user.displayName ?? "You", role: .member, joinedAt: clock.now)]
        checkIns = Dictionary(uniqueKeysWithValues: memberList.enumerated().map { ($1.userID, $0 % 3) })
        streaks = Dictionary(uniqueKeysWithValues: memberList.map { ($0.userID, 0) })
        return joined
    }

    public func leave(groupID: String) async throws(KitError) {
        try await knobs.enter("leave", clock: clock)
        _ = try ownGroup(groupID)
        group = nil
        memberList = []
        checkIns = [:]
        streaks = [:]
        for observer in observers.values {
            observer.continuation.yield(.ended(KitError(.notFound, message: "You're no longer in this group.", code: "not_found")))
            observer.continuation.finish()
        }
        observers = [:]
    }

    public func members(groupID: String) async throws(KitError) -> [GroupMember] {
        try await knobs.enter("members", clock: clock)
        _ = try ownGroup(groupID)
        return memberList.sorted { ($0.role == .admin ? 0 : 1, $0.joinedAt) < ($1.role == .admin ? 0 : 1, $1.joinedAt) }
    }

    public func leaderboard(groupID: String, type: LeaderboardType) async throws(KitError) -> GroupLeaderboard {
        try await knobs.enter("leaderboard", clock: clock)
        _ = try ownGroup(groupID)
        return board(type)
    }

    public nonisolated func liveLeaderboard(groupID: String, type: LeaderboardType) -> AsyncStream<LeaderboardUpdate> {
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
    public func checkIn(userID member: String) {
        guard memberList.contains(where: { $0.userID == member }) else { return }
        checkIns[member, default: 0] += 1
        streaks[member, default: 0] += 1
        for observer in observers.values { observer.continuation.yield(.board(board(observer.type))) }
    }

    private func ownGroup(_ id: String) throws(KitError) -> SocialGroup {
        guard let group, group.id == id else { throw KitError(.notFound, message: "You're not in this group.", code: "not_found") }
        return group
    }

    private func invitation(_ text: String) throws(KitError) -> (group: SocialGroup, members: [GroupMember]) {
        guard let code = parser.inviteCode(from: text) ?? (text.isEmpty ? nil : text), let invitation = invitations[code] else {
            throw KitError(.notFound, message: "This invite has expired or doesn't exist. Ask for a new one.", code: "not_found")
        }
        return invitation
    }

    private func board(_ type: LeaderboardType) -> GroupLeaderboard {
        let scores = type == .checkIns ? checkIns : streaks
        let sorted = memberList.sorted { (-(scores[$0.userID] ?? 0), $0.displayName) < (-(scores[$1.userID] ?? 0), $1.displayName) }
        var rows: [LeaderboardRow] = []
        for member in sorted {
            let value = scores[member.userID] ?? 0
            let rank = rows.last.map { $0.value == value ? $0.rank : rows.count + 1 } ?? 1
            rows.append(LeaderboardRow(userID: member.userID, displayName: member.displayName, photoURL: member.photoURL, value: value, rank: rank))
        }
        let today = CalendarDay(clock.now, in: .gmt)
        let monday = WorkoutStreaks.weekStart(of: today)
        return GroupLeaderboard(
            type: type, weekStart: monday, endsAt: monday.adding(days: 7).start(in: .gmt).addingTimeInterval(-1), rows: rows,
            currentUser: rows.first { $0.userID == userID }
        )
    }
}

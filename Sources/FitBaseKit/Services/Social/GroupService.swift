import FitBaseClient
import FitBaseCore
import Foundation

/// The user's challenge group (seed 004: at most 10 members, one group per user).
public struct SocialGroup: Sendable, Equatable, Identifiable, Hashable {
    public var id: String
    public var name: String
    /// The IANA time zone the group's weeks run in.
    public var timeZone: String
    public var memberCount: Int
    /// The user's role in it.
    public var role: GroupRole
    public var createdAt: Date

    /// The most members a group may have.
    public static let maximumMembers = GroupRules.maximumMembers

    /// Makes a group.
    public init(id: String, name: String, timeZone: String, memberCount: Int, role: GroupRole, createdAt: Date) {
        self.id = id
        self.name = name
        self.timeZone = timeZone
        self.memberCount = memberCount
        self.role = role
        self.createdAt = createdAt
    }

    /// Whether it has room for another member.
    public var isFull: Bool { memberCount >= Self.maximumMembers }
}

/// A member of a group.
public struct GroupMember: Sendable, Equatable, Identifiable, Hashable {
    public var userID: String
    /// The name shown; "Member N" when the member has none.
    public var displayName: String
    public var photoURL: String?
    public var role: GroupRole
    public var joinedAt: Date

    public var id: String { userID }

    /// Makes a member.
    public init(userID: String, displayName: String, photoURL: String? = nil, role: GroupRole, joinedAt: Date) {
        self.userID = userID
        self.displayName = displayName
        self.photoURL = photoURL
        self.role = role
        self.joinedAt = joinedAt
    }
}

/// An invitation the admin shares.
public struct GroupInvitation: Sendable, Equatable, Identifiable {
    public var id: String
    /// The invite code (the token in the links); shown only when the invitation is made.
    public var code: String
    /// The universal link (`https://…/invite/<code>`) to share.
    public var url: URL
    /// The app-scheme link (`fitbase://invite/<code>`).
    public var deepLink: URL
    public var expiresAt: Date
    public var maxUses: Int?
    public var useCount: Int

    /// Makes an invitation.
    public init(id: String, code: String, url: URL, deepLink: URL, expiresAt: Date, maxUses: Int?, useCount: Int) {
        self.id = id
        self.code = code
        self.url = url
        self.deepLink = deepLink
        self.expiresAt = expiresAt
        self.maxUses = maxUses
        self.useCount = useCount
    }
}

/// What an invitation leads to, before joining.
public struct InvitationPreview: Sendable, Equatable {
    public var groupID: String
    public var groupName: String
    public var memberCount: Int
    public var isFull: Bool

    /// Makes a preview.
    public init(groupID: String, groupName: String, memberCount: Int, isFull: Bool) {
        self.groupID = groupID
        self.groupName = groupName
        self.memberCount = memberCount
        self.isFull = isFull
    }
}

/// One row of a leaderboard.
public struct LeaderboardRow: Sendable, Equatable, Identifiable, Hashable {
    public var userID: String
    public var displayName: String
    public var photoURL: String?
    /// Workouts this week (check-ins) or consecutive days (streak).
    public var value: Int
    /// 1 is first; ties share a rank.
    public var rank: Int

    public var id: String { userID }

    /// Makes a row.
    public init(userID: String, displayName: String, photoURL: String? = nil, value: Int, rank: Int) {
        self.userID = userID
        self.displayName = displayName
        self.photoURL = photoURL
        self.value = value
        self.rank = rank
    }
}

/// A week's leaderboard of one challenge.
public struct GroupLeaderboard: Sendable, Equatable {
    public var type: LeaderboardType
    /// The Monday the week starts on.
    public var weekStart: CalendarDay
    /// When the week ends.
    public var endsAt: Date
    /// Best first.
    public var rows: [LeaderboardRow]
    /// The user's own row, when they have scored.
    public var currentUser: LeaderboardRow?

    /// Makes a leaderboard.
    public init(type: LeaderboardType, weekStart: CalendarDay, endsAt: Date, rows: [LeaderboardRow], currentUser: LeaderboardRow?) {
        self.type = type
        self.weekStart = weekStart
        self.endsAt = endsAt
        self.rows = rows
        self.currentUser = currentUser
    }
}

/// What a live leaderboard stream delivers.
public enum LeaderboardUpdate: Sendable, Equatable {
    /// The board now (first the current one, then each change).
    case board(GroupLeaderboard)
    /// The stream cannot go on (signed out, no longer a member); it ends after this.
    case ended(KitError)
}

/// Social challenges (seed 004): the user's group, invitations, members and live weekly leaderboards.
public protocol GroupService: Sendable {
    /// The user's group, `nil` when in none.
    func currentGroup() async throws(KitError) -> SocialGroup?
    /// Creates a group with the user as admin (`conflict` when already in one).
    func createGroup(name: String, timeZone: String) async throws(KitError) -> SocialGroup
    /// Makes an invitation to share (admins only).
    func createInvitation(groupID: String) async throws(KitError) -> GroupInvitation
    /// What the invitation with this code (or link) leads to.
    func previewInvitation(code: String) async throws(KitError) -> InvitationPreview
    /// Joins the group of an invite code or link (`fitbase://invite/…` or `https://…/invite/…`).
    func join(code: String) async throws(KitError) -> SocialGroup
    /// Leaves the group.
    func leave(groupID: String) async throws(KitError)
    /// The group's members, admins first.
    func members(groupID: String) async throws(KitError) -> [GroupMember]
    /// The group's current board of `type`.
    func leaderboard(groupID: String, type: LeaderboardType) async throws(KitError) -> GroupLeaderboard
    /// The current board, then a new one at each change, until the consumer stops or ``LeaderboardUpdate/ended(_:)``.
    func liveLeaderboard(groupID: String, type: LeaderboardType) -> AsyncStream<LeaderboardUpdate>
}

import FitBaseClient
import FitBaseCore
import Foundation

/// An invitation the admin shares.
public struct GroupInvitation: Sendable, Equatable, Identifiable {
    public var id: InviteID
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
    public init(id: InviteID, code: String, url: URL, deepLink: URL, expiresAt: Date, maxUses: Int?, useCount: Int) {
        self.id = id
        self.code = code
        self.url = url
        self.deepLink = deepLink
        self.expiresAt = expiresAt
        self.maxUses = maxUses
        self.useCount = useCount
    }
}

/// A working invitation as the group's admin lists it: who made it and how it is used, never its code.
public struct InvitationInfo: Sendable, Equatable, Identifiable {
    public var id: InviteID
    /// The member who made it.
    public var createdBy: UserID
    public var createdAt: Date
    public var expiresAt: Date
    public var maxUses: Int?
    public var useCount: Int

    /// Makes an invitation's description.
    public init(id: InviteID, createdBy: UserID, createdAt: Date, expiresAt: Date, maxUses: Int?, useCount: Int) {
        self.id = id
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.maxUses = maxUses
        self.useCount = useCount
    }
}

/// What an invitation leads to, before joining.
public struct InvitationPreview: Sendable, Equatable {
    public var groupID: GroupID
    public var groupName: String
    public var memberCount: Int
    public var isFull: Bool

    /// Makes a preview.
    public init(groupID: GroupID, groupName: String, memberCount: Int, isFull: Bool) {
        self.groupID = groupID
        self.groupName = groupName
        self.memberCount = memberCount
        self.isFull = isFull
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
    public var rows: [LeaderboardEntry]
    /// The user's own row, when they have scored.
    public var currentUser: LeaderboardEntry?
    /// The week is over: the board is final.
    public var isFinal: Bool

    /// Makes a leaderboard.
    public init(
        type: LeaderboardType, weekStart: CalendarDay, endsAt: Date, rows: [LeaderboardEntry], currentUser: LeaderboardEntry?, isFinal: Bool = false
    ) {
        self.type = type
        self.weekStart = weekStart
        self.endsAt = endsAt
        self.rows = rows
        self.currentUser = currentUser
        self.isFinal = isFinal
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
    func createInvitation(groupID: GroupID) async throws(KitError) -> GroupInvitation
    /// What the invitation with this code (or link) leads to.
    func previewInvitation(code: String) async throws(KitError) -> InvitationPreview
    /// Joins the group of an invite code or link (`fitbase://invite/…` or `https://…/invite/…`).
    func join(code: String) async throws(KitError) -> SocialGroup
    /// Leaves the group.
    func leave(groupID: GroupID) async throws(KitError)
    /// The group's members, admins first.
    func members(groupID: GroupID) async throws(KitError) -> [GroupMember]
    /// The group's current board of `type`.
    func leaderboard(groupID: GroupID, type: LeaderboardType) async throws(KitError) -> GroupLeaderboard
    /// The current board, then a new one at each change, until the consumer stops or ``LeaderboardUpdate/ended(_:)``.
    func liveLeaderboard(groupID: GroupID, type: LeaderboardType) -> AsyncStream<LeaderboardUpdate>
    /// The boards of the week holding `week` (`nil`: this week), check-ins first; a finished week's are final. Weeks
    /// are kept 90 days; a week before the user joined has none.
    func leaderboards(groupID: GroupID, week: CalendarDay?) async throws(KitError) -> [GroupLeaderboard]

    // The group's admin.

    /// Removes `member` from the group (its admin only).
    func removeMember(groupID: GroupID, member: UserID) async throws(KitError)
    /// Deletes the group (its admin only): every member is left without one.
    func deleteGroup(groupID: GroupID) async throws(KitError)
    /// The group's working invitations, newest first (its admin only).
    func invitations(groupID: GroupID) async throws(KitError) -> [InvitationInfo]
    /// Revokes an invitation: its link stops working (the group's admin, or the member who made it).
    func revokeInvitation(groupID: GroupID, id: InviteID) async throws(KitError)
}

import FitBaseClient
import FitBaseCore
import Foundation

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

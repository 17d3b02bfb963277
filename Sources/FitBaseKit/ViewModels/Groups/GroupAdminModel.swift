import FitBaseCore
import Foundation
import Observation

/// The group's admin screen (seed 004): removing a member, the working invitations and revoking one, deleting the
/// group. Removing and deleting ask for confirmation first; the server decides who may (a member who is not the
/// admin gets its `forbidden` answer, shown as the error).
@MainActor @Observable
public final class GroupAdminModel {
    /// The group administered.
    public let groupID: GroupID
    /// Its members, admins first.
    public private(set) var members: [GroupMember] = []
    /// Its working invitations, newest first.
    public private(set) var invitations: [InvitationInfo] = []
    /// The member whose removal waits for confirmation.
    public private(set) var pendingRemoval: GroupMember?
    /// Deleting the group waits for confirmation.
    public private(set) var isConfirmingDeletion = false
    /// The group was deleted: leave the screen.
    public private(set) var isDeleted = false
    public private(set) var isLoading = false
    public private(set) var isWorking = false
    public private(set) var error: ScreenError?

    private let groups: any GroupService
    private let analytics: any AnalyticsService

    /// The admin screen of `groupID` over the services of `dependencies`.
    public init(groupID: GroupID, dependencies: FitBaseDependencies) {
        self.groupID = groupID
        groups = dependencies.groups
        analytics = dependencies.analytics
    }

    /// Who made `invitation`, by name (`nil`: no longer a member).
    public func maker(of invitation: InvitationInfo) -> String? {
        members.first { $0.user == invitation.createdBy }?.displayName
    }

    /// Loads the members and the invitations.
    public func load() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            let members = try await groups.members(groupID: groupID)
            let invitations = try await groups.invitations(groupID: groupID)
            (self.members, self.invitations) = (members, invitations)
            error = nil
        } catch {
            present(error)
        }
    }

    /// Asks to remove `member` (the screen shows a confirmation).
    public func requestRemoval(of member: GroupMember) {
        pendingRemoval = member
    }

    /// Removes the member whose removal was asked for.
    public func confirmRemoval() async {
        guard let member = pendingRemoval else { return }
        pendingRemoval = nil
        await perform { () async throws(KitError) in
            try await groups.removeMember(groupID: groupID, member: member.user)
            members.removeAll { $0.user == member.user }
        }
    }

    /// Keeps the member.
    public func cancelRemoval() {
        pendingRemoval = nil
    }

    /// Revokes `invitation`: its link stops working.
    public func revoke(_ invitation: InvitationInfo) async {
        await perform { () async throws(KitError) in
            try await groups.revokeInvitation(groupID: groupID, id: invitation.id)
            invitations.removeAll { $0.id == invitation.id }
        }
    }

    /// Asks to delete the group (the screen shows a confirmation).
    public func requestDeletion() {
        isConfirmingDeletion = true
    }

    /// Keeps the group.
    public func cancelDeletion() {
        isConfirmingDeletion = false
    }

    /// Deletes the group, once confirmed.
    public func confirmDeletion() async {
        guard isConfirmingDeletion else { return }
        isConfirmingDeletion = false
        await perform { () async throws(KitError) in
            try await groups.deleteGroup(groupID: groupID)
            (members, invitations, isDeleted) = ([], [], true)
        }
    }

    private func perform(_ operation: () async throws(KitError) -> Void) async {
        isWorking = true
        defer { isWorking = false }
        error = nil
        do throws(KitError) {
            try await operation()
        } catch {
            present(error)
        }
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .groups, reason: failure.kind))
    }
}

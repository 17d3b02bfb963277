import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// Groups, their members and invites. A group is visible to its members only (404 to everyone else); deleting it and
/// removing members need its admin role (403 for other members).
struct GroupController: Sendable {
    let groups: GroupStore
    let membership: GroupMembership
    let configuration: SocialConfiguration
    let publicURL: String

    func createGroup(_ input: Operations.CreateGroup.Input) async throws -> Operations.CreateGroup.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        var errors: [Problem.FieldError] = []
        let name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty || name.count > 60 { errors.append(.init(field: "name", message: "must be 1–60 characters")) }
        let timeZone = body.timeZone ?? "UTC"
        if TimeZone(identifier: timeZone) == nil { errors.append(.init(field: "timeZone", message: "must be an IANA time zone such as Europe/Berlin")) }
        guard errors.isEmpty else { throw Problem.validationFailed(errors) }
        let group = try await membership.create(name: name, timeZone: timeZone, by: caller.user, now: .storageNow)
        return .created(.init(body: .json(Self.wire(group, role: .admin))))
    }

    func getGroup(_ input: Operations.GetGroup.Input) async throws -> Operations.GetGroup.Output {
        let (group, role) = try await memberGroup(input.path.groupId)
        return .ok(.init(body: .json(Self.wire(group, role: role))))
    }

    func deleteGroup(_ input: Operations.DeleteGroup.Input) async throws -> Operations.DeleteGroup.Output {
        let (group, role) = try await memberGroup(input.path.groupId)
        guard role == .admin else { throw Self.adminOnly }
        try await membership.delete(group.id)
        return .noContent(.init())
    }

    func listGroupMembers(_ input: Operations.ListGroupMembers.Input) async throws -> Operations.ListGroupMembers.Output {
        let (group, _) = try await memberGroup(input.path.groupId)
        let members = try await groups.members(of: group.id)
        return .ok(.init(body: .json(.init(items: members.map(Self.wire)))))
    }

    func removeGroupMember(_ input: Operations.RemoveGroupMember.Input) async throws -> Operations.RemoveGroupMember.Output {
        let (group, role) = try await memberGroup(input.path.groupId)
        guard role == .admin else { throw Self.adminOnly }
        guard let member = UserID(input.path.userId), try await membership.remove(member, from: group.id, now: .storageNow) else {
            throw Problem.notFound("\(input.path.userId) is not a member of this group.")
        }
        return .noContent(.init())
    }

    func leaveGroup(_ input: Operations.LeaveGroup.Input) async throws -> Operations.LeaveGroup.Output {
        let caller = try RequestScope.requireCaller()
        let (group, _) = try await memberGroup(input.path.groupId)
        _ = try await membership.remove(caller.user, from: group.id, now: .storageNow)
        return .noContent(.init())
    }

    func createGroupInvite(_ input: Operations.CreateGroupInvite.Input) async throws -> Operations.CreateGroupInvite.Output {
        let caller = try RequestScope.requireCaller()
        let (group, _) = try await memberGroup(input.path.groupId)
        let token = try await groups.createInvite(for: group.id, by: caller.user, now: .storageNow)
        return .created(.init(body: .json(.init(
            token: token, url: "\(publicURL)/group/invite/\(token)", deepLink: "\(configuration.appScheme)://group/invite/\(token)"
        ))))
    }

    func previewInvite(_ input: Operations.PreviewInvite.Input) async throws -> Operations.PreviewInvite.Output {
        _ = try RequestScope.requireCaller()
        let (_, group) = try await liveInvite(input.path.token)
        return .ok(.init(body: .json(.init(
            groupId: group.id.description, groupName: group.name, memberCount: group.memberCount,
            isFull: group.memberCount >= GroupStore.maximumMembers
        ))))
    }

    func acceptInvite(_ input: Operations.AcceptInvite.Input) async throws -> Operations.AcceptInvite.Output {
        let caller = try RequestScope.requireCaller()
        let (invite, _) = try await liveInvite(input.path.token)
        let group = try await membership.join(caller.user, group: invite.group, now: .storageNow)
        return .ok(.init(body: .json(Self.wire(group, role: .member))))
    }

    func revokeInvite(_ input: Operations.RevokeInvite.Input) async throws -> Operations.RevokeInvite.Output {
        let caller = try RequestScope.requireCaller()
        let (invite, group) = try await liveInvite(input.path.token)
        let membership = try await groups.membership(of: caller.user)
        guard invite.createdBy == caller.user || (membership?.group == group.id && membership?.role == .admin) else {
            throw Problem(.forbidden, code: .forbidden, detail: "Only the invite's creator or the group's admin can revoke it.")
        }
        try await groups.revokeInvite(input.path.token, now: .storageNow)
        return .noContent(.init())
    }

    func getAppSiteAssociation(_ input: Operations.GetAppSiteAssociation.Input) async throws -> Operations.GetAppSiteAssociation.Output {
        .ok(.init(body: .json(.init(applinks: .init(details: configuration.appleAppIDs.isEmpty ? [] : [
            .init(appIDs: configuration.appleAppIDs, components: [
                .init(additionalProperties: ["/": "/group/invite/*", "comment": "Group invites"]),
                .init(additionalProperties: ["/": "/auth/verify", "comment": "E-mail verification links"]),
                .init(additionalProperties: ["/": "/auth/reset", "comment": "Password reset links"]),
            ]),
        ])))))
    }

    // MARK: Helpers

    /// The group the caller is a member of, with their role; 404 for a group they are not in (it is not theirs to see).
    func memberGroup(_ id: String) async throws -> (SocialGroup, GroupRole) {
        let caller = try RequestScope.requireCaller()
        guard let groupID = GroupID(id), let membership = try await groups.membership(of: caller.user), membership.group == groupID,
            let group = try await groups.group(groupID)
        else { throw Problem.notFound("No group \(id) of yours.") }
        return (group, membership.role)
    }

    private func liveInvite(_ token: String) async throws -> ((group: GroupID, createdBy: UserID), SocialGroup) {
        guard let invite = try await groups.invite(token), let group = try await groups.group(invite.group) else {
            throw Problem.notFound("This invite does not exist or was revoked.")
        }
        return (invite, group)
    }

    static let adminOnly = Problem(.forbidden, code: .forbidden, detail: "Only the group's admin can do this.")

    static func wire(_ group: SocialGroup, role: GroupRole) -> Components.Schemas.Group {
        .init(
            id: group.id.description, name: group.name, timeZone: group.timeZone, memberCount: group.memberCount,
            createdAt: group.createdAt, role: .init(rawValue: role.rawValue) ?? .member
        )
    }

    static func wire(_ member: GroupMember) -> Components.Schemas.GroupMember {
        .init(
            userId: member.user.description, displayName: member.displayName, photoURL: member.photoURL,
            role: .init(rawValue: member.role.rawValue) ?? .member, joinedAt: member.joinedAt
        )
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// Groups, their members and invites. A group is visible to its members only (404 to everyone else); deleting it and
/// removing members need its admin role (403 for other members).
protocol GroupOperations: FeatureOperations { var socialFeature: SocialFeature { get } }

extension GroupOperations {
    private var membership: GroupMembership { socialFeature.membership }

    func createGroup(_ input: Operations.CreateGroup.Input) async throws -> Operations.CreateGroup.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let checked: (name: String, timeZone: String)
        do throws(InvalidFields) {
            checked = try GroupRules.checked(name: body.name, timeZone: body.timeZone)
        } catch {
            throw Problem.validationFailed(error)
        }
        let group = try await membership.create(name: checked.name, timeZone: checked.timeZone, by: caller.user, now: clock.now)
        return .created(.init(body: .json(GroupWire.wire(group, role: .admin))))
    }

    func getGroup(_ input: Operations.GetGroup.Input) async throws -> Operations.GetGroup.Output {
        let (group, role) = try await memberGroup(input.path.groupId)
        return .ok(.init(body: .json(GroupWire.wire(group, role: role))))
    }

    func deleteGroup(_ input: Operations.DeleteGroup.Input) async throws -> Operations.DeleteGroup.Output {
        let (group, role) = try await memberGroup(input.path.groupId)
        guard role == .admin else { throw Problem.groupAdminOnly }
        try await membership.delete(group.id, now: clock.now)
        return .noContent(.init())
    }

    func listGroupMembers(_ input: Operations.ListGroupMembers.Input) async throws -> Operations.ListGroupMembers.Output {
        let (group, _) = try await memberGroup(input.path.groupId)
        let members = try await socialFeature.groups.members(of: group.id)
        return .ok(.init(body: .json(.init(items: members.map(GroupWire.wire)))))
    }

    func removeGroupMember(_ input: Operations.RemoveGroupMember.Input) async throws -> Operations.RemoveGroupMember.Output {
        let (group, role) = try await memberGroup(input.path.groupId)
        guard role == .admin else { throw Problem.groupAdminOnly }
        guard let member = UserID(input.path.userId), try await membership.remove(member, from: group.id, now: clock.now) else {
            throw Problem.notFound("\(input.path.userId) is not a member of this group.")
        }
        return .noContent(.init())
    }

    func leaveGroup(_ input: Operations.LeaveGroup.Input) async throws -> Operations.LeaveGroup.Output {
        let caller = try RequestScope.requireCaller()
        let (group, _) = try await memberGroup(input.path.groupId)
        _ = try await membership.remove(caller.user, from: group.id, now: clock.now)
        return .noContent(.init())
    }

    func createGroupInvite(_ input: Operations.CreateGroupInvite.Input) async throws -> Operations.CreateGroupInvite.Output {
        let caller = try RequestScope.requireCaller()
        let (group, _) = try await memberGroup(input.path.groupId)
        let now = clock.now
        var expiresAt = now.addingTimeInterval(GroupStore.inviteLifetime)
        var maxUses: Int?
        if case .json(let body) = input.body {
            var errors: [Problem.FieldError] = []
            if let wanted = body.expiresAt {
                if wanted <= now || wanted.timeIntervalSince(now) > GroupStore.maximumInviteLifetime {
                    errors.append(.init(field: "expiresAt", message: "must be in the future and at most 30 days away"))
                }
                expiresAt = wanted
            }
            if let uses = body.maxUses {
                if !(1...GroupStore.maximumInviteUses).contains(uses) { errors.append(.init(field: "maxUses", message: "must be 1–\(GroupStore.maximumInviteUses)")) }
                maxUses = uses
            }
            guard errors.isEmpty else { throw Problem.validationFailed(errors) }
        }
        let (token, invite) = try await socialFeature.groups.createInvite(for: group.id, by: caller.user, expiresAt: expiresAt, maxUses: maxUses, now: now)
        return .created(.init(body: .json(.init(
            id: invite.id.description, token: token, url: "\(socialFeature.publicURL)/group/invite/\(token)", deepLink: "\(socialFeature.configuration.appScheme)://group/invite/\(token)",
            createdAt: invite.createdAt, expiresAt: invite.expiresAt, maxUses: invite.maxUses, useCount: invite.useCount
        ))))
    }

    func listGroupInvites(_ input: Operations.ListGroupInvites.Input) async throws -> Operations.ListGroupInvites.Output {
        let (group, role) = try await memberGroup(input.path.groupId)
        guard role == .admin else { throw Problem.groupAdminOnly }
        let invites = try await socialFeature.groups.invites(of: group.id, now: clock.now)
        return .ok(.init(body: .json(.init(items: invites.map { invite in
            .init(
                id: invite.id.description, createdBy: invite.createdBy.description, createdAt: invite.createdAt, expiresAt: invite.expiresAt,
                maxUses: invite.maxUses, useCount: invite.useCount
            )
        }))))
    }

    func revokeGroupInvite(_ input: Operations.RevokeGroupInvite.Input) async throws -> Operations.RevokeGroupInvite.Output {
        let caller = try RequestScope.requireCaller()
        let (group, role) = try await memberGroup(input.path.groupId)
        let now = clock.now
        guard let id = InviteID(input.path.inviteId), let invite = try await socialFeature.groups.invite(id, of: group.id, now: now) else { throw Problem.inviteGone }
        guard role == .admin || invite.createdBy == caller.user else {
            throw Problem(.forbidden, code: .forbidden, detail: "Only the invite's creator or the group's admin can revoke it.")
        }
        guard try await socialFeature.groups.revokeInvite(id, of: group.id, now: now) else { throw Problem.inviteGone }
        return .noContent(.init())
    }

    func getCurrentGroup(_ input: Operations.GetCurrentGroup.Input) async throws -> Operations.GetCurrentGroup.Output {
        let caller = try RequestScope.requireCaller()
        guard let membership = try await socialFeature.groups.membership(of: caller.user), let group = try await socialFeature.groups.group(membership.group) else {
            throw Problem.notFound("You are in no group.")
        }
        return .ok(.init(body: .json(GroupWire.wire(group, role: membership.role))))
    }

    func previewInvite(_ input: Operations.PreviewInvite.Input) async throws -> Operations.PreviewInvite.Output {
        _ = try RequestScope.requireCaller()
        let (_, group) = try await liveInvite(input.path.token)
        return .ok(.init(body: .json(.init(
            groupId: group.id.description, groupName: group.name, memberCount: group.memberCount,
            isFull: group.memberCount >= GroupRules.maximumMembers
        ))))
    }

    func acceptInvite(_ input: Operations.AcceptInvite.Input) async throws -> Operations.AcceptInvite.Output {
        let caller = try RequestScope.requireCaller()
        let (invite, _) = try await liveInvite(input.path.token)
        let group = try await membership.join(caller.user, group: invite.group, invite: input.path.token, now: clock.now)
        return .ok(.init(body: .json(GroupWire.wire(group, role: .member))))
    }

    func revokeInvite(_ input: Operations.RevokeInvite.Input) async throws -> Operations.RevokeInvite.Output {
        let caller = try RequestScope.requireCaller()
        let (invite, group) = try await liveInvite(input.path.token)
        let membership = try await socialFeature.groups.membership(of: caller.user)
        guard invite.createdBy == caller.user || (membership?.group == group.id && membership?.role == .admin) else {
            throw Problem(.forbidden, code: .forbidden, detail: "Only the invite's creator or the group's admin can revoke it.")
        }
        try await socialFeature.groups.revokeInvite(input.path.token, now: clock.now)
        return .noContent(.init())
    }

    func getAppSiteAssociation(_ input: Operations.GetAppSiteAssociation.Input) async throws -> Operations.GetAppSiteAssociation.Output {
        .ok(.init(body: .json(.init(applinks: .init(details: socialFeature.configuration.appleAppIDs.isEmpty ? [] : [
            .init(appIDs: socialFeature.configuration.appleAppIDs, components: [
                .init(additionalProperties: ["/": "/group/invite/*", "comment": "Group invites"]),
                .init(additionalProperties: ["/": "/auth/verify", "comment": "E-mail verification links"]),
                .init(additionalProperties: ["/": "/auth/reset", "comment": "Password reset links"]),
            ]),
        ])))))
    }

    // MARK: Helpers

    /// The group the caller is a member of, with their role; 404 for a group they are not in (it is not theirs to see).
    func memberGroup(_ id: String) async throws -> (StoredGroup, GroupRole) {
        let (group, membership) = try await membership(in: id)
        return (group, membership.role)
    }

    /// ``memberGroup(_:)`` with the caller's whole membership (when they joined, too).
    func membership(in id: String) async throws -> (StoredGroup, GroupMembershipRecord) {
        let caller = try RequestScope.requireCaller()
        guard let groupID = GroupID(id), let membership = try await socialFeature.groups.membership(of: caller.user), membership.group == groupID,
            let group = try await socialFeature.groups.group(groupID)
        else { throw Problem.notFound("No group \(id) of yours.") }
        return (group, membership)
    }

    private func liveInvite(_ token: String) async throws -> (GroupInvite, StoredGroup) {
        guard let invite = try await socialFeature.groups.invite(token, now: clock.now), let group = try await socialFeature.groups.group(invite.group) else { throw Problem.inviteGone }
        return (invite, group)
    }


}

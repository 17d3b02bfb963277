import FitBaseCore
import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct GroupAdminModelTests {
    private let groupID = FakeData.group(now: TestKitClock().now).0.id

    @Test func removesAMemberOnlyOnceConfirmed() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.members, .invitations, .removeMember)
        let model = GroupAdminModel(groupID: groupID, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.members.count == 5 && model.invitations.isEmpty && model.error == nil)
        let member = try #require(model.members.last)
        model.requestRemoval(of: member)
        model.cancelRemoval()
        await model.confirmRemoval()
        #expect(fixture.fakes.groups.knobs.callCount(.removeMember) == 0 && model.members.count == 5)
        model.requestRemoval(of: member)
        #expect(model.pendingRemoval == member)
        await model.confirmRemoval()
        #expect(model.members.count == 4 && !model.members.contains(member) && model.pendingRemoval == nil)
        // The service agrees: the member is gone from the group.
        #expect(try await fixture.fakes.groups.members(groupID: groupID).count == 4)
    }

    @Test func listsAndRevokesInvitationsWithTheirMakers() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.members, .invitations, .revokeInvitation, .createInvitation, .previewInvitation)
        let made = try await fixture.fakes.groups.createInvitation(groupID: groupID)
        let model = GroupAdminModel(groupID: groupID, dependencies: fixture.dependencies)
        await model.load()
        let invitation = try #require(model.invitations.first)
        #expect(invitation.id == made.id && model.maker(of: invitation) != nil)
        await model.revoke(invitation)
        #expect(model.invitations.isEmpty && model.error == nil)
        // The revoked code no longer opens anything.
        let gone = await #expect(throws: KitError.self) { try await fixture.fakes.groups.previewInvitation(code: made.code) }
        #expect(gone?.kind == .notFound)
    }

    @Test func deletesTheGroupAfterConfirmationAndShowsRefusals() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.deleteGroup, .currentGroup, .revokeInvitation)
        let model = GroupAdminModel(groupID: groupID, dependencies: fixture.dependencies)
        await model.confirmDeletion()
        #expect(!model.isDeleted && fixture.fakes.groups.knobs.callCount(.deleteGroup) == 0)
        model.requestDeletion()
        model.cancelDeletion()
        #expect(!model.isConfirmingDeletion)
        let unknown = InvitationInfo(id: InviteID(), createdBy: FakeData.user.id, createdAt: Date(), expiresAt: Date(), maxUses: nil, useCount: 0)
        await model.revoke(unknown)
        #expect(model.error?.kind == .notFound && fixture.events.contains(.operationFailed(feature: .groups, reason: .notFound)))
        model.requestDeletion()
        await model.confirmDeletion()
        #expect(model.isDeleted && model.error == nil && model.members.isEmpty)
        #expect(try await fixture.fakes.groups.currentGroup() == nil)
    }

    @Test func aMemberWhoIsNotTheAdminIsRefused() async throws {
        let fixture = Fixture(.empty)
        fixture.fakes.groups.knobs.implement(.join, .members, .invitations)
        let joined = try await fixture.fakes.groups.join(code: FakeGroupService.sampleInviteCode)
        let model = GroupAdminModel(groupID: joined.id, dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error?.kind == .forbidden && model.invitations.isEmpty)
    }
}

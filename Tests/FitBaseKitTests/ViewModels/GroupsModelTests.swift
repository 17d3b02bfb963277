import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct GroupsModelTests {
    @Test func loadsTheGroupAndItsMembers() async {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.currentGroup, .members)
        let model = GroupsModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.group?.name == "Morning Movers" && model.members.count == 5 && model.isAdmin && !model.isEmpty)
        #expect(model.members.first?.role == .admin)
    }

    @Test func createsAGroupAndSharesAnInvitation() async {
        let fixture = Fixture(.empty)
        fixture.fakes.groups.knobs.implement(.createGroup, .createInvitation, .currentGroup, .members)
        let model = GroupsModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.isEmpty)
        model.newGroupName = "   "
        await model.create(timeZone: .gmt)
        #expect(model.fieldErrors["name"] != nil && model.group == nil)
        model.newGroupName = " Lunch Lifters "
        await model.create(timeZone: .gmt)
        #expect(model.group?.name == "Lunch Lifters" && model.members.count == 1 && model.newGroupName.isEmpty)
        #expect(model.shareMessage == nil)
        await model.createInvitation()
        #expect(model.invitation != nil && model.shareMessage?.contains("/group/invite/") == true)
        model.didShareInvitation()
        #expect(fixture.events == [.groupCreated, .inviteShared])

        model.newGroupName = "Second"
        await model.create(timeZone: .gmt)
        #expect(model.error?.kind == .conflict && model.group?.name == "Lunch Lifters")
    }

    /// The name rule is Core's (the server's): up to ``GroupRules/maximumNameLength`` characters once trimmed.
    @Test func aGroupNameIsCheckedByCoresRule() async {
        let fixture = Fixture(.empty)
        fixture.fakes.groups.knobs.implement(.createGroup, .currentGroup, .members)
        let model = GroupsModel(dependencies: fixture.dependencies)
        await model.load()
        model.newGroupName = String(repeating: "a", count: GroupRules.maximumNameLength + 1)
        await model.create(timeZone: .gmt)
        #expect(model.fieldErrors["name"] != nil && model.group == nil)
        #expect(fixture.fakes.groups.knobs.callCount(.createGroup) == 0)
        let longest = String(repeating: "b", count: GroupRules.maximumNameLength)
        model.newGroupName = "  \(longest)  "
        await model.create(timeZone: .gmt)
        #expect(model.group?.name == longest && model.fieldErrors.isEmpty)
    }

    @Test func joinsByLinkAfterAPreview() async {
        let fixture = Fixture(.empty)
        fixture.fakes.groups.knobs.implement(.join, .members, .previewInvitation)
        let model = GroupsModel(dependencies: fixture.dependencies)
        await model.previewInvite(code: FakeGroupService.sampleInviteCode)
        #expect(model.preview?.groupName == "Evening Crew" && model.preview?.memberCount == 3 && model.group == nil)
        await model.acceptInvite()
        #expect(model.group?.name == "Evening Crew" && model.members.count == 4 && model.preview == nil && !model.isAdmin)
        #expect(fixture.events == [.groupJoined(.link)])
        await model.acceptInvite()
        #expect(fixture.events == [.groupJoined(.link)])
    }

    @Test func joinsByATypedCodeOrPastedLink() async {
        let fixture = Fixture(.empty)
        fixture.fakes.groups.knobs.implement(.join, .members, .previewInvitation)
        let model = GroupsModel(dependencies: fixture.dependencies)
        model.inviteText = "no"
        await model.previewTypedInvite()
        #expect(model.fieldErrors["code"] != nil)
        model.inviteText = "  \(FakeGroupService.sampleInviteCode) "
        await model.previewTypedInvite()
        model.declineInvite()
        #expect(model.preview == nil)
        model.inviteText = "https://fitbase.example.com/group/invite/\(FakeGroupService.sampleInviteCode)"
        await model.previewTypedInvite()
        await model.acceptInvite()
        #expect(model.group?.name == "Evening Crew" && model.inviteText.isEmpty)
        #expect(fixture.events == [.groupJoined(.link)])
    }

    @Test func anUnknownInviteAndJoiningWhileInAGroup() async {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.currentGroup, .join, .members, .previewInvitation)
        let model = GroupsModel(dependencies: fixture.dependencies)
        await model.previewInvite(code: "unknown-code-123")
        #expect(model.error?.kind == .notFound && model.preview == nil)
        await model.load()
        await model.previewInvite(code: FakeGroupService.sampleInviteCode, source: .code)
        await model.acceptInvite()
        #expect(model.error?.kind == .conflict && model.group?.name == "Morning Movers")
    }

    @Test func leavingTheGroup() async {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.currentGroup, .leave, .members)
        let model = GroupsModel(dependencies: fixture.dependencies)
        await model.load()
        await model.leave()
        #expect(model.group == nil && model.members.isEmpty && model.isEmpty)
        #expect(fixture.events == [.groupLeft])
        await model.leave()
        await model.createInvitation()
        #expect(fixture.events == [.groupLeft])
    }

    @Test func offline() async {
        let fixture = Fixture(.strict)
        fixture.fakes.groups.knobs.implement(.createGroup, .currentGroup)
        fixture.fakes.groups.knobs.failEverything(with: .offline)
        let model = GroupsModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.error?.isOffline == true && !model.isEmpty && !model.isLoading)
        model.newGroupName = "x"
        await model.create()
        #expect(model.error?.isRetryable == true && !model.isWorking)
    }
}

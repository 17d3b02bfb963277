import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct AppModelTests {
    /// Finishes the signed-in user's onboarding answers (the canned profile tracks the cycle without a last period).
    private func completeProfile(_ fixture: Fixture) async throws {
        var profile = FakeData.profile
        profile.lastPeriodStartDate = "2026-02-20"
        _ = try await fixture.fakes.profile.saveProfile(profile)
    }

    @Test func routesBySessionAndOnboarding() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.auth.knobs.implement(.signIn)
        fixture.fakes.profile.knobs.implement(.profile, .saveProfile)
        try await completeProfile(fixture)
        let model = AppModel(dependencies: fixture.dependencies)
        #expect(model.route == .launching)
        await model.start()
        #expect(model.route == .main)
        await fixture.fakes.auth.endSession()
        await eventually { model.route == .signIn }
        model.auth.email = FakeData.user.email!
        model.auth.password = FakeData.password
        await model.auth.signIn()
        await eventually { model.route == .main }
        model.stop()
    }

    @Test func aNewAccountGoesThroughOnboarding() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signUp)
        fixture.fakes.profile.knobs.implement(.profile)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        #expect(model.route == .signIn)
        await model.onboardingFinished()
        #expect(model.route == .signIn)
        model.auth.email = "new@example.com"
        model.auth.password = "long enough password"
        await model.auth.signUp()
        await eventually { model.route == .onboarding }
        await model.onboardingFinished()
        #expect(model.route == .main)
        model.stop()
    }

    @Test func anUnreachableProfileStillOpensTheApp() async {
        let fixture = Fixture(.empty)
        fixture.fakes.profile.knobs.implement(.profile)
        fixture.fakes.profile.knobs.fail(.profile, with: .offline)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        #expect(model.route == .main)
        model.stop()
    }

    @Test func anInviteLinkOpensTheJoinPreview() async throws {
        let fixture = Fixture(.empty)
        fixture.fakes.profile.knobs.implement(.profile, .saveProfile)
        fixture.fakes.groups.knobs.implement(.join, .members, .previewInvitation)
        try await completeProfile(fixture)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        let opened = await model.open(URL(string: "fitbase://group/invite/\(FakeGroupService.sampleInviteCode)")!)
        #expect(opened && model.destination == .joinGroup(code: FakeGroupService.sampleInviteCode))
        #expect(model.groups.preview?.groupName == "Evening Crew")
        await model.groups.acceptInvite()
        #expect(model.groups.group?.name == "Evening Crew")
        #expect(fixture.events == [.deepLinkOpened(.invite), .groupJoined(.link)])
        model.dismissDestination()
        #expect(model.destination == nil)
        model.stop()
    }

    @Test func anInviteOpenedSignedOutWaitsForSignIn() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.signIn)
        fixture.fakes.profile.knobs.implement(.profile)
        fixture.fakes.groups.knobs.implement(.previewInvitation)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        await model.open(URL(string: "https://fitbase.example.com/group/invite/\(FakeGroupService.sampleInviteCode)")!)
        #expect(model.pendingInviteCode == FakeGroupService.sampleInviteCode && model.destination == nil)
        model.auth.email = FakeData.user.email!
        model.auth.password = FakeData.password
        await model.auth.signIn()
        await eventually { model.route == .onboarding }
        #expect(model.destination == nil && model.pendingInviteCode != nil)
        await model.onboardingFinished()
        #expect(model.destination == .joinGroup(code: FakeGroupService.sampleInviteCode))
        await eventually { model.groups.preview != nil }
        #expect(model.pendingInviteCode == nil)
        model.stop()
    }

    @Test func verificationAndResetLinks() async {
        let fixture = Fixture(.signedOut)
        fixture.fakes.auth.knobs.implement(.verifyEmail)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()
        await model.open(URL(string: "fitbase://auth/reset?token=abc")!)
        #expect(model.destination == .resetPassword && model.auth.resetToken == "abc")
        await model.open(URL(string: "https://fitbase.example.com/auth/verify?token=nope")!)
        #expect(model.destination == .emailVerified && model.auth.error?.kind == .invalidInput)
        #expect(await model.open(URL(string: "https://elsewhere.example.com/x")!) == false)
        #expect(fixture.events.prefix(2) == [.deepLinkOpened(.resetPassword), .deepLinkOpened(.verifyEmail)])
        #expect(fixture.events.last == .deepLinkRejected)
        model.stop()
    }
}

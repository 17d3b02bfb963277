import FitBaseCore
import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct SecurityModelsTests {
    @Test func signsAnotherDeviceOutOnceConfirmedAndThisOneBySigningOut() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.sessions, .endSession)
        fixture.fakes.auth.knobs.implement(.signOut)
        let model = SessionsModel(dependencies: fixture.dependencies)
        await model.load()
        #expect(model.sessions.count == 2 && model.sessions.first?.isCurrent == true && model.otherSessions.count == 1)
        let other = try #require(model.otherSessions.first)
        model.requestSignOut(of: other)
        model.cancelSignOut()
        await model.confirmSignOut()
        #expect(fixture.fakes.profile.knobs.callCount(.endSession) == 0)
        model.requestSignOut(of: other)
        await model.confirmSignOut()
        #expect(model.otherSessions.isEmpty && model.error == nil)

        let this = try #require(model.sessions.first)
        model.requestSignOut(of: this)
        await model.confirmSignOut()
        #expect(await fixture.dependencies.auth.currentState().userID == nil && fixture.events == [.signedOut])
    }

    @Test func aSessionAlreadyGoneLeavesTheListAndOtherFailuresShow() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.sessions, .endSession)
        let model = SessionsModel(dependencies: fixture.dependencies)
        await model.load()
        let other = try #require(model.otherSessions.first)
        try await fixture.fakes.profile.endSession(id: other.id)
        model.requestSignOut(of: other)
        await model.confirmSignOut()
        #expect(model.otherSessions.isEmpty && model.error == nil)

        fixture.fakes.profile.knobs.fail(.sessions, with: .offline)
        await model.load()
        #expect(model.error?.kind == .offline && fixture.events == [.operationFailed(feature: .auth, reason: .offline)])
    }

    @Test func theAuditLogPagesNewestFirstAndShowsRefusals() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.auditLog)
        let model = AuditLogModel(dependencies: fixture.dependencies, pageSize: 10)
        await model.load()
        #expect(model.entries.count == 10 && model.hasMore && model.refusals.count == 1)
        #expect(model.entries.first?.outcome == .denied && model.entries.first?.action == .read && model.entries.first?.resource == .healthSamples)
        #expect(zip(model.entries, model.entries.dropFirst()).allSatisfy { $0.sequence > $1.sequence })
        await model.loadMore()
        await model.loadMore()
        #expect(model.entries.count == 29 && !model.hasMore)
        await model.loadMore()
        #expect(model.entries.count == 29 && fixture.fakes.profile.knobs.callCount(.auditLog) == 3)
        await model.load()
        #expect(model.entries.count == 10)
        fixture.fakes.profile.knobs.fail(.auditLog, with: .offline)
        await model.loadMore()
        #expect(model.error?.kind == .offline && model.entries.count == 10)
    }

    @Test func theSensitiveContentSwitchSavesThePushSettingsAtOnce() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.profile, .consents, .saveProfile)
        let model = ProfileModel(dependencies: fixture.dependencies)
        await model.setShowSensitiveContent(true)
        #expect(fixture.fakes.profile.knobs.callCount(.saveProfile) == 0, "nothing to change before the profile is loaded")
        await model.load()
        #expect(!model.showsSensitiveContent)
        model.draft.displayName = "Unsaved edit"
        await model.setShowSensitiveContent(true)
        #expect(model.showsSensitiveContent && model.error == nil)
        let saved = try await fixture.fakes.profile.profile().profile
        #expect(saved.notificationPreferences.showSensitiveContent && saved.displayName != "Unsaved edit")
        #expect(model.draft.displayName == "Unsaved edit" && model.hasChanges)
    }
}

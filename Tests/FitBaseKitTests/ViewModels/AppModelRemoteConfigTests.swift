import FitBaseAPI
import FitBaseKit
import Foundation
import Testing

/// The root model shows the Groups tab by remote config's `social_beta`, fetched at launch and on each return to the
/// foreground (issue 39).
@MainActor @Suite struct AppModelRemoteConfigTests {
    @Test func theGroupsTabFollowsTheSocialBetaFlag() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.profile)
        fixture.fakes.billing.knobs.implement(.refreshEntitlement)
        fixture.fakes.plans.knobs.implement(.syncNow)
        let model = AppModel(dependencies: fixture.dependencies)
        #expect(model.showsGroupsTab)  // the in-app default before anything is fetched
        await fixture.fakes.remoteConfig.serve(["social_beta": .bool(false)])
        await model.start()
        #expect(!model.showsGroupsTab)

        // The operator widens the rollout; the app sees it when it comes back to the foreground.
        await fixture.fakes.remoteConfig.serve(["social_beta": .bool(true)])
        await model.becameActive()
        #expect(model.showsGroupsTab)

        // A failed fetch keeps what was fetched last.
        await fixture.fakes.remoteConfig.serve(["social_beta": .bool(false)])
        fixture.fakes.remoteConfig.knobs.fail(.refresh, with: .offline)
        await model.becameActive()
        #expect(model.showsGroupsTab)
        // A value of another kind is no value: the in-app default.
        fixture.fakes.remoteConfig.knobs.clearFailures()
        await fixture.fakes.remoteConfig.serve(["social_beta": .string("yes")])
        await model.refreshConfig()
        #expect(model.showsGroupsTab)
        model.stop()
    }
}

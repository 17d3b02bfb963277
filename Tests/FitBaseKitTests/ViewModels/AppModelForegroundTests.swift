import FitBaseKit
import Foundation
import Testing

/// The app coming to the foreground revalidates the entitlement (issue 34, item 1).
@MainActor @Suite struct AppModelForegroundTests {
    @Test func comingToTheForegroundTakesWhatTheStoreDeliveredWhileAway() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.profile.knobs.implement(.profile)
        fixture.fakes.billing.knobs.implement(.refreshEntitlement)
        fixture.fakes.plans.knobs.implement(.syncNow)
        let model = AppModel(dependencies: fixture.dependencies)
        await model.start()

        // An Ask to Buy approval arrives while the server is out of reach: it waits, unfinished.
        fixture.fakes.billing.knobs.fail(.refreshEntitlement, with: .offline)
        let approved = await fixture.fakes.billing.store.deliver(productID: "fitbase.premium.yearly")
        await eventually { fixture.fakes.billing.knobs.callCount(.refreshEntitlement) == 1 }
        #expect(await fixture.fakes.billing.requiresUpgrade(for: .premiumContent) == .premium)

        fixture.fakes.billing.knobs.clearFailures()
        await model.becameActive()
        #expect(fixture.fakes.billing.knobs.callCount(.refreshEntitlement) == 2)
        #expect(await fixture.fakes.billing.requiresUpgrade(for: .premiumContent) == nil)
        #expect(await fixture.fakes.billing.store.finished == [approved.id])

        // Signed out, there is nothing to refresh.
        await fixture.fakes.auth.endSession()
        await eventually { model.route == .signIn }
        await model.becameActive()
        #expect(fixture.fakes.billing.knobs.callCount(.refreshEntitlement) == 2)
        model.stop()
    }
}

import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

/// The fake billing takes the store's transactions as the live service does (issue 34, item 8): a transaction is
/// finished only once taken, one the "server" could not take stays unfinished for the next refresh.
@Suite struct FakeBillingTests {
    @Test func aPurchaseFinishesTheStoresTransactionOnceTaken() async throws {
        let fakes = FakeServices(scenario: .empty, clock: TestKitClock())
        guard case .purchased(let state) = try await fakes.billing.purchase(productID: "fitbase.pro.monthly") else {
            Issue.record("the purchase did not go through")
            return
        }
        #expect(state.entitlement.tier == .pro)
        #expect(await fakes.billing.store.unfinished.isEmpty)
        #expect(await fakes.billing.store.finished.count == 1)
    }

    @Test func anAskToBuyApprovalArrivesThroughTheStoresUpdates() async throws {
        let fakes = FakeServices(scenario: .empty, clock: TestKitClock())
        var updates = await fakes.billing.entitlementUpdates().makeAsyncIterator()
        #expect(await updates.next()?.entitlement.tier == .free)
        await fakes.billing.store.setNextOutcome(.pending)
        #expect(try await fakes.billing.purchase(productID: "fitbase.premium.monthly") == .pending)
        #expect(await fakes.billing.requiresUpgrade(for: .premiumContent) == .premium)

        let approved = await fakes.billing.store.deliver(productID: "fitbase.premium.monthly")
        #expect(await updates.next()?.entitlement.tier == .premium)
        #expect(await fakes.billing.requiresUpgrade(for: .premiumContent) == nil)
        #expect(await FitBaseTestSupport.eventually { await fakes.billing.store.finished == [approved.id] })
    }

    @Test func aTransactionTheServerCouldNotTakeStaysUnfinishedUntilTheNextRefresh() async throws {
        let fakes = FakeServices(scenario: .empty, clock: TestKitClock())
        fakes.billing.knobs.fail(.refreshEntitlement, with: .offline)
        let renewal = await fakes.billing.store.deliver(productID: "fitbase.pro.yearly")
        #expect(await FitBaseTestSupport.eventually { fakes.billing.knobs.callCount(.refreshEntitlement) == 1 })
        #expect(await fakes.billing.store.unfinished == [renewal])
        #expect(await fakes.billing.requiresUpgrade(for: .customPlans) == .pro)

        await fakes.billing.refreshEntitlement()
        #expect(await fakes.billing.store.unfinished == [renewal])

        fakes.billing.knobs.clearFailures()
        await fakes.billing.refreshEntitlement()
        #expect(await fakes.billing.store.unfinished.isEmpty)
        #expect(await fakes.billing.store.finished == [renewal.id])
        #expect(await fakes.billing.requiresUpgrade(for: .customPlans) == nil)
    }

    @Test func aStrictFakeAnswersARefreshOnlyWhenTheTestSetItUp() async {
        let fakes = FakeServices(scenario: .strict, clock: TestKitClock())
        await withKnownIssue {
            await fakes.billing.refreshEntitlement()
        }
        fakes.billing.knobs.implement(.refreshEntitlement)
        await fakes.billing.refreshEntitlement()
        #expect(fakes.billing.knobs.callCount(.refreshEntitlement) == 2)
    }

    @Test func theFakeSellsItsServersProductsAsTheLiveServiceDoes() async throws {
        let fakes = FakeServices(scenario: .empty, clock: TestKitClock())
        let offers = try await fakes.billing.offers()
        #expect(offers.map { $0.products.map(\.id) } == [[], ["fitbase.pro.monthly", "fitbase.pro.yearly"], ["fitbase.premium.monthly", "fitbase.premium.yearly"]])
        #expect(offers.flatMap(\.products).allSatisfy { $0.isPurchasable })
        #expect(offers[2].products.map(\.period) == [.monthly, .yearly] && offers[2].products[1].hasFreeTrial)
        // A product the fake server does not list is not sold, and the store is not asked.
        await #expect(throws: KitError(.notFound, message: "This subscription is not available.", isRetryable: false)) {
            try await fakes.billing.purchase(productID: "fitbase.premium.lifetime")
        }
        #expect(fakes.billing.store.knobs.callCount(.purchase) == 0)
    }

    @Test func withoutAStoreTheFakeListsItsProductsUnpricedAndSellsNothing() async throws {
        let billing = FakeBillingService(purchasesAvailable: false, clock: TestKitClock())
        let products = try await billing.offers().flatMap(\.products)
        #expect(products.map(\.id) == FakeBillingService.products.map(\.productID))
        #expect(products.allSatisfy { !$0.isPurchasable } && products.first?.displayName == "Pro (monthly)")
        await #expect(throws: KitError.self) { try await billing.purchase(productID: "fitbase.pro.monthly") }
        await #expect(throws: KitError.self) { try await billing.restorePurchases() }
        #expect(billing.store.knobs.callCount(.purchase) == 0)
    }
}

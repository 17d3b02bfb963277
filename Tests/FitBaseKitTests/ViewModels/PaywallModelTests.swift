import FitBaseKit
import Foundation
import Testing

@MainActor @Suite struct PaywallModelTests {
    @Test func showsTheTiersAndTracksThePaywall() async {
        let fixture = Fixture(.strict)
        fixture.fakes.billing.knobs.implement(.entitlement, .offers)
        let prompt = UpgradePrompt(requiredTier: .premium, feature: .premiumContent)
        let model = PaywallModel(dependencies: fixture.dependencies, prompt: prompt)
        await model.appear()
        #expect(model.offers.map(\.tier) == [.free, .pro, .premium] && model.currentTier == .free)
        #expect(model.upgradeOffers.map(\.tier) == [.pro, .premium] && !model.isUnlocked)
        #expect(model.newFeatures(of: .free) == [.basicPlans, .workoutTracking])
        #expect(model.newFeatures(of: .pro) == [.customPlans, .analytics])
        #expect(model.newFeatures(of: .premium) == [.advancedProgression, .premiumContent])
        #expect(await model.requiresUpgrade(.analytics) == .pro)
        #expect(await model.requiresUpgrade(.workoutTracking) == nil)
        #expect(fixture.events == [.paywallShown(feature: .premiumContent, requiredTier: .premium)])
    }

    @Test func purchasingUnlocksAndTracksIt() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.billing.knobs.implement(.entitlement, .offers, .purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        let model = PaywallModel(dependencies: fixture.dependencies, prompt: UpgradePrompt(requiredTier: .pro))
        await model.appear()
        let product = try #require(model.offers.first { $0.tier == .premium }?.products.first)
        await model.purchase(product)
        #expect(model.outcome == .purchased(.premium) && model.currentTier == .premium && model.isUnlocked)
        #expect(model.purchasingProductID == nil && model.upgradeOffers.isEmpty)
        #expect(fixture.events.suffix(2) == [.purchaseStarted(productID: product.id), .purchaseCompleted(productID: product.id, tier: .premium)])
        #expect(fixture.events.first == .paywallShown(feature: nil, requiredTier: .pro))
    }

    @Test func cancelledAndPendingPurchases() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.billing.knobs.implement(.entitlement, .offers, .purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        let model = PaywallModel(dependencies: fixture.dependencies)
        await model.appear()
        let product = try #require(model.upgradeOffers.first?.products.first)
        await fixture.fakes.billing.store.setNextOutcome(.cancelled)
        await model.purchase(product)
        #expect(model.outcome == .cancelled && model.currentTier == .free)
        #expect(fixture.events.last == .purchaseCancelled(productID: product.id))
        await fixture.fakes.billing.store.setNextOutcome(.pending)
        await model.purchase(product)
        #expect(model.outcome == .pending && model.currentTier == .free)
    }

    @Test func aFailedPurchaseIsRetryable() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.billing.knobs.implement(.entitlement, .offers, .purchase)
        fixture.fakes.billing.store.knobs.implement(.purchase)
        fixture.fakes.billing.knobs.failOnce(.purchase, with: KitError(.purchaseFailed))
        let model = PaywallModel(dependencies: fixture.dependencies)
        await model.appear()
        let product = try #require(model.upgradeOffers.first?.products.first)
        await model.purchase(product)
        #expect(model.error?.kind == .purchaseFailed && model.error?.isRetryable == true)
        #expect(fixture.events.last == .purchaseFailed(productID: product.id, reason: .purchaseFailed))
        await model.purchase(product)
        #expect(model.error == nil && model.outcome == .purchased(.pro))
    }

    @Test func restoringFindsEarlierPurchases() async throws {
        let fixture = Fixture(.strict)
        fixture.fakes.billing.knobs.implement(.entitlement, .offers, .purchase, .restorePurchases)
        fixture.fakes.billing.store.knobs.implement(.purchase, .restore)
        _ = try await fixture.fakes.billing.purchase(productID: "fitbase.pro.yearly")
        await fixture.fakes.billing.setEntitlement(.free)
        let model = PaywallModel(dependencies: fixture.dependencies)
        await model.appear()
        #expect(model.currentTier == .free)
        await model.restore()
        #expect(model.outcome == .restored(.pro) && model.currentTier == .pro && !model.isRestoring)
        #expect(fixture.events.last == .purchasesRestored(tier: .pro))
        fixture.fakes.billing.knobs.fail(.restorePurchases, with: .offline)
        await model.restore()
        #expect(model.error?.isOffline == true)
    }

    @Test func offlineOffers() async {
        let fixture = Fixture(.strict)
        fixture.fakes.billing.knobs.implement(.offers)
        fixture.fakes.billing.knobs.fail(.offers, with: .offline)
        let model = PaywallModel(dependencies: fixture.dependencies)
        await model.appear()
        #expect(model.error?.isOffline == true && model.offers.isEmpty && !model.isLoading)
        #expect(model.newFeatures(of: .pro).isEmpty)
        #expect(!fixture.events.contains { $0.name == "paywall_shown" })
    }

    @Test func withoutAStoreTheProductsShowUnpricedAndABuyTapExplainsWhy() async throws {
        let fixture = Fixture(.strict)
        var dependencies = fixture.dependencies
        let billing = FakeBillingService(purchasesAvailable: false, clock: fixture.clock)
        billing.knobs.implement(.entitlement, .offers, .purchase)
        dependencies.billing = billing
        let model = PaywallModel(dependencies: dependencies)
        await model.appear()
        let product = try #require(model.upgradeOffers.first?.products.first)
        #expect(product.displayPrice == nil && !product.isPurchasable && product.period == .monthly)
        await model.purchase(product)
        #expect(model.error?.kind == .purchaseFailed && model.error?.isRetryable == false && model.outcome == nil)
        #expect(billing.knobs.callCount(.purchase) == 0)
        #expect(!fixture.events.contains { $0.name == "purchase_started" })
    }
}

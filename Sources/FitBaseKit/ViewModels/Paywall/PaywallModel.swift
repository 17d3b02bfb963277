import FitBaseCore
import Foundation
import Observation

/// The paywall (seeds 000, 001): the tiers with their features and the server's products (``listBillingProducts``)
/// priced by the store, the user's entitlement, purchase through the billing service's ``PurchaseProvider`` and
/// restore. Without a store (Linux, a web build) the products are listed unpriced and cannot be bought
/// (``SubscriptionProduct/isPurchasable``). Analytics hears the paywall shown, the purchase
/// started, completed, cancelled or failed, and restores.
@MainActor @Observable
public final class PaywallModel {
    /// How the last purchase ended.
    public enum PurchaseOutcome: Sendable, Equatable {
        /// Bought: the new tier.
        case purchased(SubscriptionTier)
        /// Waiting for approval (Ask to Buy).
        case pending
        /// The user cancelled.
        case cancelled
        /// Restored: the tier found.
        case restored(SubscriptionTier)
    }

    /// The tiers, free first.
    public private(set) var offers: [TierOffer] = []
    /// The user's entitlement (`nil` until loaded).
    public private(set) var entitlement: Entitlements.Snapshot?
    /// What the paywall was opened for, if anything.
    public let prompt: UpgradePrompt?
    public private(set) var isLoading = false
    /// The product being bought (or `restore` running).
    public private(set) var purchasingProductID: String?
    public private(set) var isRestoring = false
    public private(set) var outcome: PurchaseOutcome?
    public private(set) var error: ScreenError?

    private let billing: any BillingService
    private let analytics: any AnalyticsService

    /// A paywall over the services of `dependencies`, opened for `prompt` (an action that needed an upgrade) or from
    /// the settings (`nil`).
    public init(dependencies: FitBaseDependencies, prompt: UpgradePrompt? = nil) {
        billing = dependencies.billing
        analytics = dependencies.analytics
        self.prompt = prompt
    }

    /// The user's tier.
    public var currentTier: SubscriptionTier { entitlement?.entitlement.tier ?? .free }
    /// The tiers above the user's, which the paywall sells.
    public var upgradeOffers: [TierOffer] { offers.filter { $0.tier > currentTier } }
    /// The user already has the tier the paywall was opened for: close it.
    public var isUnlocked: Bool { prompt.map { currentTier >= $0.requiredTier } ?? false }

    /// The features `tier` adds to the tier below it, in `Feature.allCases` order (what its column lists).
    public func newFeatures(of tier: SubscriptionTier) -> [Feature] {
        let sorted = offers.sorted { $0.tier < $1.tier }
        guard let index = sorted.firstIndex(where: { $0.tier == tier }) else { return [] }
        let below = index > 0 ? sorted[index - 1].features : []
        return Feature.allCases.filter { sorted[index].features.contains($0) && !below.contains($0) }
    }

    /// The tier to upgrade to for `feature` (`nil`: the user has it), from the cached entitlement.
    public func requiresUpgrade(_ feature: Feature) async -> SubscriptionTier? {
        await billing.requiresUpgrade(for: feature)
    }

    /// Loads the offers and the entitlement (none signed out: the free tier) and records the paywall shown.
    public func appear() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            offers = try await billing.offers()
            do throws(KitError) {
                entitlement = try await billing.entitlement(policy: .cacheFirst).value
            } catch where error.kind == .notSignedIn {
                // A paywall shown before sign-in: the products, and no entitlement (free) until someone signs in.
                entitlement = nil
            }
            error = nil
        } catch {
            present(error)
            return
        }
        let wanted = prompt?.requiredTier ?? upgradeOffers.first?.tier ?? .premium
        analytics.track(.paywallShown(feature: prompt?.feature, requiredTier: wanted))
    }

    /// Buys `product`; one the store did not price cannot be bought here (the error says so, nothing is asked).
    public func purchase(_ product: SubscriptionProduct) async {
        guard purchasingProductID == nil else { return }
        guard product.isPurchasable else {
            error = ScreenError(LiveBillingService.purchasesUnavailable)
            return
        }
        purchasingProductID = product.id
        defer { purchasingProductID = nil }
        error = nil
        analytics.track(.purchaseStarted(productID: product.id))
        do throws(KitError) {
            switch try await billing.purchase(productID: product.id) {
            case .purchased(let state):
                entitlement = state
                outcome = .purchased(state.entitlement.tier)
                analytics.track(.purchaseCompleted(productID: product.id, tier: state.entitlement.tier))
            case .pending:
                outcome = .pending
            case .cancelled:
                outcome = .cancelled
                analytics.track(.purchaseCancelled(productID: product.id))
            }
        } catch {
            present(error)
            analytics.track(.purchaseFailed(productID: product.id, reason: error.kind))
        }
    }

    /// Restores purchases made on another device or before a reinstall.
    public func restore() async {
        isRestoring = true
        defer { isRestoring = false }
        error = nil
        do throws(KitError) {
            let state = try await billing.restorePurchases()
            entitlement = state
            outcome = .restored(state.entitlement.tier)
            analytics.track(.purchasesRestored(tier: state.entitlement.tier))
        } catch {
            present(error)
        }
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .billing, reason: failure.kind))
    }
}

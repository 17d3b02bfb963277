import FitBaseCore
import Foundation

/// How often a subscription renews.
public enum BillingPeriod: String, Sendable, Equatable, CaseIterable {
    case monthly, yearly
}

/// A product the store sells, as the paywall lists it.
public struct SubscriptionProduct: Sendable, Equatable, Identifiable, Hashable {
    /// The store's product id, e.g. `com.example.premium.yearly`.
    public var id: String
    /// The tier it unlocks.
    public var tier: SubscriptionTier
    /// The store's localised name and price, e.g. `Premium`, `€59.99`.
    public var displayName: String
    public var displayPrice: String
    public var period: BillingPeriod
    /// Whether a free trial comes first.
    public var hasFreeTrial: Bool

    /// Makes a product.
    public init(id: String, tier: SubscriptionTier, displayName: String, displayPrice: String, period: BillingPeriod, hasFreeTrial: Bool = false) {
        self.id = id
        self.tier = tier
        self.displayName = displayName
        self.displayPrice = displayPrice
        self.period = period
        self.hasFreeTrial = hasFreeTrial
    }
}

/// A tier as the paywall compares them: what it unlocks and the products that sell it.
public struct TierOffer: Sendable, Equatable, Identifiable {
    public var tier: SubscriptionTier
    /// Every feature the tier includes.
    public var features: Set<Feature>
    /// The products selling it, monthly first.
    public var products: [SubscriptionProduct]

    public var id: SubscriptionTier { tier }

    /// Makes an offer.
    public init(tier: SubscriptionTier, features: Set<Feature>, products: [SubscriptionProduct]) {
        self.tier = tier
        self.features = features
        self.products = products
    }
}

/// The user's entitlement as the app uses it: the tier and status, and per feature whether it is allowed.
public struct EntitlementState: Sendable, Equatable {
    /// The resolved entitlement (tier, status, expiry, renewal, source).
    public var entitlement: Entitlement
    /// Per feature, the lowest tier that unlocks it and whether the user has it.
    public var features: [Feature: FeatureAccess]

    /// One feature's answer.
    public struct FeatureAccess: Sendable, Equatable {
        public var allowed: Bool
        public var requiredTier: SubscriptionTier

        /// Makes an answer.
        public init(allowed: Bool, requiredTier: SubscriptionTier) {
            self.allowed = allowed
            self.requiredTier = requiredTier
        }
    }

    /// Makes a state.
    public init(entitlement: Entitlement, features: [Feature: FeatureAccess]) {
        self.entitlement = entitlement
        self.features = features
    }

    /// The state of `entitlement` under the standard tiers (what the server answers with the default products file).
    public static func standard(_ entitlement: Entitlement) -> EntitlementState {
        var features: [Feature: FeatureAccess] = [:]
        for feature in Feature.allCases {
            let required = TierFeatures.standard.requiredTier(for: feature) ?? .free
            features[feature] = FeatureAccess(allowed: entitlement.tier >= required, requiredTier: required)
        }
        return EntitlementState(entitlement: entitlement, features: features)
    }

    /// Whether `feature` is allowed.
    public func isAllowed(_ feature: Feature) -> Bool { features[feature]?.allowed ?? false }

    /// The tier to upgrade to for `feature`; `nil` when it is allowed.
    public func requiresUpgrade(for feature: Feature) -> SubscriptionTier? {
        guard let access = features[feature] else { return TierFeatures.standard.requiredTier(for: feature) }
        return access.allowed ? nil : access.requiredTier
    }
}

/// A store product as the platform's store describes it.
public struct StoreProduct: Sendable, Equatable {
    public var id: String
    public var displayName: String
    public var displayPrice: String
    public var hasFreeTrial: Bool

    /// Makes a store product.
    public init(id: String, displayName: String, displayPrice: String, hasFreeTrial: Bool = false) {
        self.id = id
        self.displayName = displayName
        self.displayPrice = displayPrice
        self.hasFreeTrial = hasFreeTrial
    }
}

/// A transaction the store signed, for the server to verify: a purchase, a renewal, an Ask to Buy approval, a purchase
/// on another device. The store delivers it again until it is finished (``PurchaseProvider/finish(transactionID:)``),
/// which the Kit does only once the server has taken it.
public struct StoreTransaction: Sendable, Equatable, Hashable {
    /// The store's id of the transaction (StoreKit's `Transaction.id`).
    public var id: String
    /// The product bought.
    public var productID: String
    /// The signed transaction (StoreKit 2's `VerificationResult.jwsRepresentation`) the server verifies.
    public var signedTransaction: String

    /// Makes a transaction.
    public init(id: String, productID: String, signedTransaction: String) {
        self.id = id
        self.productID = productID
        self.signedTransaction = signedTransaction
    }
}

/// What the store said about a purchase.
public enum StorePurchaseOutcome: Sendable, Equatable {
    /// Bought: the transaction to send to the server, then finish.
    case purchased(StoreTransaction)
    /// Waiting for approval (Ask to Buy, a strong customer authentication step); the transaction comes later, through
    /// ``PurchaseProvider/transactionUpdates()``.
    case pending
    /// The user cancelled.
    case cancelled
}

/// The platform's store, without naming StoreKit: the app passes `StoreKitPurchaseProvider` (Apple platforms), tests
/// and Linux a fake.
public protocol PurchaseProvider: Sendable {
    /// The products with these ids the store sells (unknown ids are left out).
    func products(ids: [String]) async throws -> [StoreProduct]
    /// Buys `productID` for the user with this app account token (the user id, so the server can match it). A bought
    /// transaction is left unfinished: the caller finishes it once the server has it.
    func purchase(productID: String, appAccountToken: UUID?) async throws -> StorePurchaseOutcome
    /// The signed transactions of every current entitlement (`Transaction.currentEntitlements`), after syncing with the store.
    func restore() async throws -> [String]
    /// The transactions the store delivered that were never finished (`Transaction.unfinished`): one the server did not
    /// take, or one that came while nobody was signed in.
    func unfinishedTransactions() async -> [StoreTransaction]
    /// The transactions the store delivers from now on outside a purchase (`Transaction.updates`): renewals, Ask to Buy
    /// approvals, purchases on other devices, refunds — and, at launch, those left unfinished.
    func transactionUpdates() async -> AsyncStream<StoreTransaction>
    /// Tells the store the transaction is dealt with (`Transaction.finish()`), so it is not delivered again.
    func finish(transactionID: String) async
}

/// What a purchase ended in.
public enum PurchaseResult: Sendable, Equatable {
    /// Bought and verified by the server: the new entitlement.
    case purchased(EntitlementState)
    /// Waiting for approval; the entitlement changes when the store approves.
    case pending
    /// The user cancelled.
    case cancelled
}

/// Subscriptions (seeds 000, 001): the tiers and products, the cached entitlement and feature gating, purchase and
/// restore through a ``PurchaseProvider``.
public protocol BillingService: Sendable {
    /// The tiers, free first, with their features and products.
    func offers() async throws(KitError) -> [TierOffer]
    /// The user's entitlement, cache-first; an expired subscription in the cache counts as not entitled.
    func entitlement(policy: CachePolicy) async throws(KitError) -> Loaded<EntitlementState>
    /// The tier to upgrade to for `feature` (`nil`: allowed), from the cached entitlement — never waits for the network.
    func requiresUpgrade(for feature: Feature) async -> SubscriptionTier?
    /// The entitlement now (when known) and at every change.
    func entitlementUpdates() async -> AsyncStream<EntitlementState>
    /// Buys `productID` and has the server verify it.
    func purchase(productID: String) async throws(KitError) -> PurchaseResult
    /// Restores purchases made on another device or before a reinstall.
    func restorePurchases() async throws(KitError) -> EntitlementState
    /// Brings the entitlement up to date with the server: the store's unfinished transactions are sent first, then the
    /// cached entitlement is revalidated (unchanged, it costs a 304). The live services do it at launch, at each
    /// sign-in and on the server's `subscription` events; call it when the app comes to the foreground
    /// (``AppModel/becameActive()``). Offline, the cached entitlement stays; ``entitlementUpdates()`` tells any change.
    func refreshEntitlement() async
}

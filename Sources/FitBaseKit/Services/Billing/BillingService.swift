import FitBaseCore
import Foundation

/// A product the paywall lists: one of the server's products (``BillingProduct``, from ``listBillingProducts``) with
/// the store's name and price. Without a store to price it (no ``PurchaseProvider``: Linux, a web build) it has no
/// price and cannot be bought here.
public struct SubscriptionProduct: Sendable, Equatable, Identifiable, Hashable {
    /// The server's product: its store, id, tier and period.
    public var product: BillingProduct
    /// The store's localised name, e.g. `Premium`; without a store, the tier and period, e.g. `Premium (yearly)`.
    public var displayName: String
    /// The store's localised price, e.g. `€59.99`; `nil` when no store priced it (then it cannot be bought here).
    public var displayPrice: String?
    /// Whether a free trial comes first.
    public var hasFreeTrial: Bool

    /// The store's product id, e.g. `com.example.premium.yearly`.
    public var id: String { product.productID }
    /// The tier it unlocks.
    public var tier: SubscriptionTier { product.tier }
    /// How often it renews.
    public var period: BillingPeriod { product.period }
    /// Whether it can be bought on this device: the store priced it.
    public var isPurchasable: Bool { displayPrice != nil }

    /// A product of the server's list, priced by the store (`storeProduct`) or unpriced (`nil`).
    public init(_ product: BillingProduct, store storeProduct: StoreProduct?) {
        self.product = product
        displayName = storeProduct?.displayName ?? "\(product.tier.rawValue.capitalized) (\(product.period.rawValue))"
        displayPrice = storeProduct?.displayPrice
        hasFreeTrial = storeProduct?.hasFreeTrial ?? false
    }

    /// An App Store product priced by the store (previews, tests).
    public init(
        id: String, tier: SubscriptionTier, displayName: String, displayPrice: String?, period: BillingPeriod, hasFreeTrial: Bool = false
    ) {
        product = BillingProduct(store: .appStore, productID: id, tier: tier, period: period)
        self.displayName = displayName
        self.displayPrice = displayPrice
        self.hasFreeTrial = hasFreeTrial
    }
}

/// A tier as the paywall compares them: what it unlocks and the products that sell it.
public struct TierOffer: Sendable, Equatable, Identifiable {
    /// The tier.
    public var tier: SubscriptionTier
    /// Every feature the tier includes.
    public var features: Set<Feature>
    /// The products selling it, the shortest period first (monthly before yearly), in the server's order otherwise.
    public var products: [SubscriptionProduct]

    /// The tier, which names the offer.
    public var id: SubscriptionTier { tier }

    /// Makes an offer.
    public init(tier: SubscriptionTier, features: Set<Feature>, products: [SubscriptionProduct]) {
        self.tier = tier
        self.features = features
        self.products = products
    }

    /// Every tier, free first, with the features `features` says it unlocks and the products of `products` that sell
    /// it (the shortest period first).
    static func all(features: (SubscriptionTier) -> Set<Feature>, products: [SubscriptionProduct]) -> [TierOffer] {
        SubscriptionTier.allCases.sorted().map { tier in
            let selling = products.enumerated().filter { $0.element.tier == tier }
                .sorted { ($0.element.period, $0.offset) < ($1.element.period, $1.offset) }.map(\.element)
            return TierOffer(tier: tier, features: features(tier), products: selling)
        }
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
    case purchased(Entitlements.Snapshot)
    /// Waiting for approval; the entitlement changes when the store approves.
    case pending
    /// The user cancelled.
    case cancelled
}

/// Subscriptions (seeds 000, 001): the tiers and products, the cached entitlement and feature gating, purchase and
/// restore through a ``PurchaseProvider``.
public protocol BillingService: Sendable {
    /// The tiers, free first, with their features and the products selling them: the server's App Store products
    /// (``listBillingProducts``, cache-first), priced by the ``PurchaseProvider`` — those the store does not sell are
    /// left out; without a provider every one is listed unpriced (``SubscriptionProduct/isPurchasable`` false).
    func offers() async throws(KitError) -> [TierOffer]
    /// The user's entitlement, cache-first; an expired subscription in the cache counts as not entitled.
    func entitlement(policy: CachePolicy) async throws(KitError) -> Loaded<Entitlements.Snapshot>
    /// The tier to upgrade to for `feature` (`nil`: allowed), from the cached entitlement — never waits for the network.
    func requiresUpgrade(for feature: Feature) async -> SubscriptionTier?
    /// The entitlement now (when known) and at every change.
    func entitlementUpdates() async -> AsyncStream<Entitlements.Snapshot>
    /// Buys `productID` — one of the server's App Store products, else ``KitError/Kind/notFound`` with nothing asked
    /// of the store — and has the server verify it.
    func purchase(productID: String) async throws(KitError) -> PurchaseResult
    /// Restores purchases made on another device or before a reinstall.
    func restorePurchases() async throws(KitError) -> Entitlements.Snapshot
    /// Brings the entitlement up to date with the server: the store's unfinished transactions are sent first, then the
    /// cached entitlement is revalidated (unchanged, it costs a 304). The live services do it at launch, at each
    /// sign-in and on the server's `subscription` events; call it when the app comes to the foreground
    /// (``AppModel/becameActive()``). Offline, the cached entitlement stays; ``entitlementUpdates()`` tells any change.
    func refreshEntitlement() async
}

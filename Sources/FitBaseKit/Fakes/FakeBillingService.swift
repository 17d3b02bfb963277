import FitBaseCore
import Foundation

/// The store the fakes buy from: sells ``FakeBillingService/products`` and answers purchases with
/// ``nextOutcome`` — a "signed transaction" that is just `fake-jws:<product id>`.
public actor FakePurchaseProvider: PurchaseProvider {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case products, purchase, restore
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakePurchaseProvider")
    private let clock: any KitClock
    /// What the next purchase ends in (`nil`: purchased).
    public var nextOutcome: StorePurchaseOutcome?
    /// The product ids bought so far (what a restore finds).
    public private(set) var owned: [String] = []

    /// A store with nothing bought yet.
    public init(clock: any KitClock = SystemKitClock()) {
        self.clock = clock
    }

    /// Sets what the next purchase ends in.
    public func setNextOutcome(_ outcome: StorePurchaseOutcome?) {
        nextOutcome = outcome
    }

    public func products(ids: [String]) async throws -> [StoreProduct] {
        try await knobs.enter(.products, clock: clock)
        return FakeBillingService.products.filter { ids.contains($0.id) }.map {
            StoreProduct(id: $0.id, displayName: $0.displayName, displayPrice: $0.displayPrice, hasFreeTrial: $0.hasFreeTrial)
        }
    }

    public func purchase(productID: String, appAccountToken: UUID?) async throws -> StorePurchaseOutcome {
        try await knobs.enter(.purchase, clock: clock)
        let outcome = nextOutcome ?? .purchased(signedTransaction: "fake-jws:" + productID)
        nextOutcome = nil
        if case .purchased = outcome { owned.append(productID) }
        return outcome
    }

    public func restore() async throws -> [String] {
        try await knobs.enter(.restore, clock: clock)
        return owned.map { "fake-jws:" + $0 }
    }
}

/// An in-memory ``BillingService``: four products (Pro and Premium, monthly and yearly) over the standard tiers; a
/// purchase through the ``FakePurchaseProvider`` grants the product's tier for a month or a year, and an entitlement
/// whose expiry has passed on the clock counts as free.
public actor FakeBillingService: BillingService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case offers, entitlement, purchase, restorePurchases
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeBillingService")
    /// The store.
    public nonisolated let store: FakePurchaseProvider
    private let clock: any KitClock
    private var granted: Entitlement
    private let observers = ValueStreams<EntitlementState>()

    /// The products the fake store sells.
    public static let products: [SubscriptionProduct] = [
        SubscriptionProduct(id: "fitbase.pro.monthly", tier: .pro, displayName: "Pro", displayPrice: "$4.99", period: .monthly),
        SubscriptionProduct(id: "fitbase.pro.yearly", tier: .pro, displayName: "Pro (yearly)", displayPrice: "$39.99", period: .yearly, hasFreeTrial: true),
        SubscriptionProduct(id: "fitbase.premium.monthly", tier: .premium, displayName: "Premium", displayPrice: "$9.99", period: .monthly),
        SubscriptionProduct(
            id: "fitbase.premium.yearly", tier: .premium, displayName: "Premium (yearly)", displayPrice: "$79.99", period: .yearly, hasFreeTrial: true),
    ]

    /// A fake starting with `entitlement` (free by default).
    public init(entitlement: Entitlement = .free, store: FakePurchaseProvider? = nil, clock: any KitClock = SystemKitClock()) {
        self.granted = entitlement
        self.clock = clock
        self.store = store ?? FakePurchaseProvider(clock: clock)
    }

    /// The entitlement as the app sees it now: past its expiry it is free.
    private var state: EntitlementState {
        EntitlementState.standard(granted.effective(at: clock.now))
    }

    /// Replaces the entitlement (a renewal, a refund …) and tells observers.
    public func setEntitlement(_ entitlement: Entitlement) {
        granted = entitlement
        publish()
    }

    public func offers() async throws(KitError) -> [TierOffer] {
        try await knobs.enter(.offers, clock: clock)
        return SubscriptionTier.allCases.sorted().map { tier in
            TierOffer(tier: tier, features: TierFeatures.standard.features[tier] ?? [], products: Self.products.filter { $0.tier == tier })
        }
    }

    public func entitlement(policy: CachePolicy) async throws(KitError) -> Loaded<EntitlementState> {
        try await knobs.enter(.entitlement, clock: clock)
        return Loaded(state, source: policy == .cacheOnly ? .cache : .server, fetchedAt: clock.now)
    }

    public func requiresUpgrade(for feature: Feature) async -> SubscriptionTier? {
        state.requiresUpgrade(for: feature)
    }

    public func entitlementUpdates() -> AsyncStream<EntitlementState> {
        let (stream, continuation) = observers.make(buffer: 1)
        continuation.yield(state)
        return stream
    }

    private func publish() {
        let current = state
        observers.send(current)
    }

    public func purchase(productID: String) async throws(KitError) -> PurchaseResult {
        try await knobs.enter(.purchase, clock: clock)
        guard let product = Self.products.first(where: { $0.id == productID }) else {
            throw KitError(.notFound, message: "This subscription is not available.")
        }
        let outcome: StorePurchaseOutcome
        do {
            outcome = try await store.purchase(productID: productID, appAccountToken: nil)
        } catch let error as KitError {
            throw error
        } catch {
            throw KitError(.purchaseFailed)
        }
        switch outcome {
        case .purchased:
            grant(product)
            return .purchased(state)
        case .pending: return .pending
        case .cancelled: return .cancelled
        }
    }

    public func restorePurchases() async throws(KitError) -> EntitlementState {
        try await knobs.enter(.restorePurchases, clock: clock)
        let transactions: [String]
        do {
            transactions = try await store.restore()
        } catch let error as KitError {
            throw error
        } catch {
            throw KitError(.purchaseFailed)
        }
        let bought = transactions.compactMap { jws in Self.products.first { "fake-jws:" + $0.id == jws } }
        if let best = bought.max(by: { $0.tier < $1.tier }) { grant(best) }
        return state
    }

    private func grant(_ product: SubscriptionProduct) {
        let length: TimeInterval = product.period == .monthly ? 30 * 86_400 : 365 * 86_400
        granted = Entitlement(tier: product.tier, status: .active, expiresAt: clock.now.addingTimeInterval(length), willRenew: true, source: .appStore)
        publish()
    }
}

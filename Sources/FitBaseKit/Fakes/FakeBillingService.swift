import FitBaseCore
import Foundation
import Synchronization

/// The store the fakes buy from: sells ``FakeBillingService/products`` and answers purchases with
/// ``nextOutcome`` — a transaction whose "signed transaction" is just `fake-jws:<product id>`. Like StoreKit, it keeps
/// every transaction it delivered unfinished until ``finish(transactionID:)``; ``deliver(productID:)`` plays a
/// transaction arriving outside a purchase (a renewal, an Ask to Buy approval, a purchase on another device).
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
    /// The transactions delivered and not finished yet, oldest first.
    public private(set) var unfinished: [StoreTransaction] = []
    /// The ids of the transactions finished, in order.
    public private(set) var finished: [String] = []
    private var lastTransactionNumber = 0
    private nonisolated let updates = ValueStreams<StoreTransaction>()

    /// A store with nothing bought yet.
    public init(clock: any KitClock = SystemKitClock()) {
        self.clock = clock
    }

    /// Sets what the next purchase ends in.
    public func setNextOutcome(_ outcome: StorePurchaseOutcome?) {
        nextOutcome = outcome
    }

    /// A transaction of `productID` as the fake signs it.
    public static func transaction(id: String, productID: String) -> StoreTransaction {
        StoreTransaction(id: id, productID: productID, signedTransaction: "fake-jws:" + productID)
    }

    /// Delivers a transaction of `productID` outside a purchase, as `Transaction.updates` does, and returns it.
    @discardableResult
    public func deliver(productID: String) -> StoreTransaction {
        let transaction = newTransaction(productID)
        owned.append(productID)
        updates.send(transaction)
        return transaction
    }

    private func newTransaction(_ productID: String) -> StoreTransaction {
        lastTransactionNumber += 1
        let transaction = Self.transaction(id: "fake-transaction-\(lastTransactionNumber)", productID: productID)
        unfinished.append(transaction)
        return transaction
    }

    public func products(ids: [String]) async throws -> [StoreProduct] {
        try await knobs.enter(.products, clock: clock)
        return FakeBillingService.products.filter { ids.contains($0.id) }.map {
            StoreProduct(id: $0.id, displayName: $0.displayName, displayPrice: $0.displayPrice, hasFreeTrial: $0.hasFreeTrial)
        }
    }

    public func purchase(productID: String, appAccountToken: UUID?) async throws -> StorePurchaseOutcome {
        try await knobs.enter(.purchase, clock: clock)
        let outcome = nextOutcome ?? .purchased(Self.transaction(id: "", productID: productID))
        nextOutcome = nil
        guard case .purchased(let bought) = outcome else { return outcome }
        owned.append(bought.productID)
        return .purchased(newTransaction(bought.productID))
    }

    public func restore() async throws -> [String] {
        try await knobs.enter(.restore, clock: clock)
        return owned.map { "fake-jws:" + $0 }
    }

    public func unfinishedTransactions() async -> [StoreTransaction] {
        unfinished
    }

    public nonisolated func transactionUpdates() -> AsyncStream<StoreTransaction> {
        updates.make(buffer: .max).stream
    }

    public func finish(transactionID: String) async {
        guard let index = unfinished.firstIndex(where: { $0.id == transactionID }) else { return }
        unfinished.remove(at: index)
        finished.append(transactionID)
    }
}

/// An in-memory ``BillingService``: four products (Pro and Premium, monthly and yearly) over the standard tiers; a
/// purchase through the ``FakePurchaseProvider`` grants the product's tier for a month or a year, and an entitlement
/// whose expiry has passed on the clock counts as free. As the live service does, it takes every transaction the store
/// delivers (``FakePurchaseProvider/deliver(productID:)``) and finishes it only once taken: with
/// ``Operation/refreshEntitlement`` failing (the server out of reach) a delivered transaction stays unfinished, and the
/// next ``refreshEntitlement()`` takes it.
public actor FakeBillingService: BillingService {
    /// What the knobs name: the service's operations (``Operation/refreshEntitlement`` also names taking a transaction
    /// the store delivered: what the server does in the live service).
    public enum Operation: String, FakeOperation {
        case offers, entitlement, purchase, restorePurchases, refreshEntitlement
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeBillingService")
    /// The store.
    public nonisolated let store: FakePurchaseProvider
    private let clock: any KitClock
    private var granted: Entitlement
    private let observers = ValueStreams<EntitlementState>()
    private nonisolated let listener = Mutex<Task<Void, Never>?>(nil)

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
        let updates = self.store.transactionUpdates()
        listener.withLock { listener in
            listener = Task { [weak self] in
                for await transaction in updates { await self?.take(transaction) }
            }
        }
    }

    deinit {
        listener.withLock { $0?.cancel() }
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
        case .purchased(let transaction):
            grant(product)
            await store.finish(transactionID: transaction.id)
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

    public func refreshEntitlement() async {
        do throws(KitError) {
            try await knobs.enter(.refreshEntitlement, clock: clock)
        } catch {
            return
        }
        for transaction in await store.unfinishedTransactions() { await settle(transaction) }
        publish()
    }

    /// A transaction the store delivered: taken (granted, then finished) unless the "server" is failing.
    private func take(_ transaction: StoreTransaction) async {
        do throws(KitError) {
            try await knobs.enter(.refreshEntitlement, clock: clock)
        } catch {
            return
        }
        await settle(transaction)
    }

    private func settle(_ transaction: StoreTransaction) async {
        if let product = Self.products.first(where: { FakePurchaseProvider.transaction(id: transaction.id, productID: $0.id) == transaction }) {
            grant(product)
        }
        await store.finish(transactionID: transaction.id)
    }

    private func grant(_ product: SubscriptionProduct) {
        let length: TimeInterval = product.period == .monthly ? 30 * 86_400 : 365 * 86_400
        granted = Entitlement(tier: product.tier, status: .active, expiresAt: clock.now.addingTimeInterval(length), willRenew: true, source: .appStore)
        publish()
    }
}

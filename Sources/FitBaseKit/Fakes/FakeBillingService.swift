import FitBaseCore
import Foundation
import Synchronization

/// The store the fakes buy from: sells ``storeProducts`` (the fake server's ``FakeBillingService/products``, priced)
/// and answers purchases with
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

    /// What the fake store sells, with its prices: every product of ``FakeBillingService/products``, the yearly ones
    /// with a free trial.
    public static let storeProducts: [StoreProduct] = [
        StoreProduct(id: "fitbase.pro.monthly", displayName: "Pro", displayPrice: "$4.99"),
        StoreProduct(id: "fitbase.pro.yearly", displayName: "Pro (yearly)", displayPrice: "$39.99", hasFreeTrial: true),
        StoreProduct(id: "fitbase.premium.monthly", displayName: "Premium", displayPrice: "$9.99"),
        StoreProduct(id: "fitbase.premium.yearly", displayName: "Premium (yearly)", displayPrice: "$79.99", hasFreeTrial: true),
    ]

    public func products(ids: [String]) async throws -> [StoreProduct] {
        try await knobs.enter(.products, clock: clock)
        return Self.storeProducts.filter { ids.contains($0.id) }
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

/// An in-memory ``BillingService``: the fake server lists four products (``products``: Pro and Premium, monthly and
/// yearly) over the standard tiers, priced by the ``FakePurchaseProvider`` — or, made with `purchasesAvailable: false`
/// (a device without a store), listed unpriced and never sold, as the live service does without a provider. A purchase
/// grants the product's tier for a month or a year; a product the fake server does not list is not sold; an
/// entitlement whose expiry has passed on the clock counts as free. As the live service does, it takes every transaction the store
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
    private let purchasesAvailable: Bool
    private let user = UserID()
    private var granted: Entitlement
    private let observers = ValueStreams<Entitlements.Snapshot>()
    private nonisolated let listener = Mutex<Task<Void, Never>?>(nil)

    /// The fake server's products file.
    public static let products: [BillingProduct] = [
        BillingProduct(store: .appStore, productID: "fitbase.pro.monthly", tier: .pro, period: .monthly),
        BillingProduct(store: .appStore, productID: "fitbase.pro.yearly", tier: .pro, period: .yearly),
        BillingProduct(store: .appStore, productID: "fitbase.premium.monthly", tier: .premium, period: .monthly),
        BillingProduct(store: .appStore, productID: "fitbase.premium.yearly", tier: .premium, period: .yearly),
    ]

    /// A fake starting with `entitlement` (free by default); `purchasesAvailable: false` plays a device without a store.
    public init(
        entitlement: Entitlement = .free, store: FakePurchaseProvider? = nil, purchasesAvailable: Bool = true,
        clock: any KitClock = SystemKitClock()
    ) {
        self.granted = entitlement
        self.purchasesAvailable = purchasesAvailable
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
    private var state: Entitlements.Snapshot {
        Entitlements.Snapshot.standard(granted.effective(at: clock.now), userID: user, at: clock.now)
    }

    /// Replaces the entitlement (a renewal, a refund …) and tells observers.
    public func setEntitlement(_ entitlement: Entitlement) {
        granted = entitlement
        publish()
    }

    public func offers() async throws(KitError) -> [TierOffer] {
        try await knobs.enter(.offers, clock: clock)
        let priced = Self.products.compactMap { product in
            guard purchasesAvailable else { return SubscriptionProduct(product, store: nil) }
            let priced = FakePurchaseProvider.storeProducts.first { $0.id == product.productID }
            return priced.map { SubscriptionProduct(product, store: $0) }
        }
        return TierOffer.all(features: { TierFeatures.standard.features[$0] ?? [] }, products: priced)
    }

    public func entitlement(policy: CachePolicy) async throws(KitError) -> Loaded<Entitlements.Snapshot> {
        try await knobs.enter(.entitlement, clock: clock)
        return Loaded(state, source: policy == .cacheOnly ? .cache : .server, fetchedAt: clock.now)
    }

    public func requiresUpgrade(for feature: Feature) async -> SubscriptionTier? {
        state.requiresUpgrade(for: feature)
    }

    public func entitlementUpdates() -> AsyncStream<Entitlements.Snapshot> {
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
        guard purchasesAvailable else { throw LiveBillingService.purchasesUnavailable }
        guard let product = Self.products.first(where: { $0.productID == productID }) else {
            throw LiveBillingService.notSold
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

    public func restorePurchases() async throws(KitError) -> Entitlements.Snapshot {
        try await knobs.enter(.restorePurchases, clock: clock)
        guard purchasesAvailable else { throw LiveBillingService.purchasesUnavailable }
        let transactions: [String]
        do {
            transactions = try await store.restore()
        } catch let error as KitError {
            throw error
        } catch {
            throw KitError(.purchaseFailed)
        }
        let bought = transactions.compactMap { jws in Self.products.first { "fake-jws:" + $0.productID == jws } }
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
        let signed = { (product: BillingProduct) in
            FakePurchaseProvider.transaction(id: transaction.id, productID: product.productID) == transaction
        }
        if let product = Self.products.first(where: signed) {
            grant(product)
        }
        await store.finish(transactionID: transaction.id)
    }

    private func grant(_ product: BillingProduct) {
        let length = TimeInterval(product.period.approximateDays) * 86_400
        granted = Entitlement(tier: product.tier, status: .active, expiresAt: clock.now.addingTimeInterval(length), willRenew: true, source: .appStore)
        publish()
    }
}

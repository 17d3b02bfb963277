import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``BillingService`` over the SDK's ``Entitlements`` (the server's resolved entitlement, cached for offline launches)
/// and a ``PurchaseProvider`` (StoreKit 2 in the app). The products are the server's (``listBillingProducts``, cached
/// and revalidated with their `ETag`), priced by the provider: the app declares none, and sells nothing the server's
/// products file does not list. The cached entitlement honours its expiry offline: a subscription whose period has
/// ended counts as free until the server says it renewed. Every transaction the store delivers goes to the server and
/// is finished only once the server took it; one it did not take stays unfinished, and the store delivers it again.
public struct LiveBillingService: BillingService {
    let client: FitBaseClient
    let entitlements: Entitlements
    let store: (any PurchaseProvider)?
    let cache: ResponseCache
    let ttl: Duration
    let clock: any KitClock

    /// A service selling the server's products through `store` (`nil`: listed unpriced, never sold).
    init(
        client: FitBaseClient, entitlements: Entitlements, store: (any PurchaseProvider)?, cache: ResponseCache, ttl: Duration,
        clock: any KitClock
    ) {
        self.client = client
        self.entitlements = entitlements
        self.store = store
        self.cache = cache
        self.ttl = ttl
        self.clock = clock
    }

    public func offers() async throws(KitError) -> [TierOffer] {
        let products = try await appStoreProducts(policy: .cacheFirst)
        let priced: [SubscriptionProduct]
        if let store {
            let known: [StoreProduct]
            do {
                known = try await store.products(ids: products.map(\.productID))
            } catch {
                // The store could not be asked (no network): nothing can be bought until it can, so say so.
                throw (error as? KitError) ?? KitError(.offline)
            }
            let byID = Dictionary(known.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            // What the store does not sell (another app's products in the same file) cannot be bought here.
            priced = products.compactMap { product in
                byID[product.productID].map { SubscriptionProduct(product, store: $0) }
            }
        } else {
            priced = products.map { SubscriptionProduct($0, store: nil) }
        }
        let snapshot = await entitlements.current()
        return TierOffer.all(
            features: { tier in
                snapshot.map { snapshot in Set(snapshot.features.filter { $0.value.requiredTier <= tier }.keys) }
                    ?? TierFeatures.standard.features[tier] ?? []
            },
            products: priced
        )
    }

    /// The server's App Store products, in its order, cache-first (revalidated with the list's `ETag`).
    private func appStoreProducts(policy: CachePolicy) async throws(KitError) -> [BillingProduct] {
        let client = client
        let list = try await cache.load([BillingProduct].self, key: "billing:products", ttl: ttl, policy: policy) {
            etag throws(FitBaseError) in
            let answer = try await client.call { () async throws -> (Components.Schemas.BillingProductList, String?)? in
                let output = try await client.api.listBillingProducts(headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return nil }
                let ok = try output.ok
                return (try ok.body.json, ok.headers.eTag)
            }
            guard let (list, tag) = answer else { return .notModified }
            return .fresh(try ContractJSON.record([BillingProduct].self, from: list.items), etag: tag)
        }
        return list.value.filter { $0.store == .appStore }
    }

    public func entitlement(policy: CachePolicy) async throws(KitError) -> Loaded<Entitlements.Snapshot> {
        let cached = await entitlements.current()
        if let cached, policy != .revalidate, clock.now.timeIntervalSince(cached.fetchedAt) < ttl.timeInterval {
            return Loaded(cached.effective(at: clock.now), source: .cache, fetchedAt: cached.fetchedAt)
        }
        if policy == .cacheOnly {
            guard let cached else { throw .offline }
            return Loaded(cached.effective(at: clock.now), source: .staleCache, fetchedAt: cached.fetchedAt)
        }
        do throws(FitBaseError) {
            let fresh = try await entitlements.refresh()
            await tierSettled(from: cached, to: fresh)
            return Loaded(fresh.effective(at: clock.now), source: .server, fetchedAt: fresh.fetchedAt)
        } catch {
            if case .transport = error, let cached {
                return Loaded(cached.effective(at: clock.now), source: .staleCache, fetchedAt: cached.fetchedAt)
            }
            throw KitError(error)
        }
    }

    public func requiresUpgrade(for feature: Feature) async -> SubscriptionTier? {
        guard let snapshot = await entitlements.current() else { return TierFeatures.standard.requiredTier(for: feature) }
        return snapshot.effective(at: clock.now).requiresUpgrade(for: feature)
    }

    public func entitlementUpdates() async -> AsyncStream<Entitlements.Snapshot> {
        let snapshots = await entitlements.updates()
        let (stream, continuation) = AsyncStream<Entitlements.Snapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let clock = clock
        let task = Task {
            for await snapshot in snapshots { continuation.yield(snapshot.effective(at: clock.now)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func purchase(productID: String) async throws(KitError) -> PurchaseResult {
        guard let store else { throw Self.purchasesUnavailable }
        guard let userID = await client.currentUserID() else { throw .notSignedIn }
        // A product the server's products file does not list grants nothing: it is not sold.
        var listed = try await appStoreProducts(policy: .cacheFirst)
        if !listed.contains(where: { $0.productID == productID }) {
            listed = try await appStoreProducts(policy: .revalidate)
        }
        guard listed.contains(where: { $0.productID == productID }) else { throw Self.notSold }
        let outcome: StorePurchaseOutcome
        do {
            outcome = try await store.purchase(productID: productID, appAccountToken: userID.rawValue)
        } catch {
            let failure = (error as? KitError) ?? KitError(.purchaseFailed)
            throw failure
        }
        switch outcome {
        case .purchased(let transaction):
            do throws(FitBaseError) {
                let snapshot = try await entitlements.submitAppStoreTransaction(transaction.signedTransaction)
                await store.finish(transactionID: transaction.id)
                // Premium videos and recommendations depend on the tier: drop what was cached under the old one.
                await cache.invalidate(prefix: "catalog:")
                await cache.invalidate(prefix: "recommendations:")
                return .purchased(snapshot.effective(at: clock.now))
            } catch {
                throw KitError(error)
            }
        case .pending:
            return .pending
        case .cancelled:
            return .cancelled
        }
    }

    public func restorePurchases() async throws(KitError) -> Entitlements.Snapshot {
        guard let store else { throw Self.purchasesUnavailable }
        let transactions: [String]
        do {
            transactions = try await store.restore()
        } catch {
            throw (error as? KitError) ?? KitError(.purchaseFailed)
        }
        do throws(FitBaseError) {
            var snapshot = try await entitlements.refresh()
            for transaction in transactions { snapshot = try await entitlements.submitAppStoreTransaction(transaction) }
            await cache.invalidate(prefix: "catalog:")
            await cache.invalidate(prefix: "recommendations:")
            return snapshot.effective(at: clock.now)
        } catch {
            throw KitError(error)
        }
    }

    public func refreshEntitlement() async {
        guard await client.currentUserID() != nil else { return }
        let cached = await entitlements.current()
        if let store {
            for transaction in await store.unfinishedTransactions() { try? await deliver(transaction) }
        }
        guard let fresh = try? await entitlements.refresh() else { return }
        await tierSettled(from: cached, to: fresh)
    }

    /// Sends a transaction the store delivered outside a purchase to the server, then finishes it. Throws when the
    /// server did not take it (nobody signed in, offline, refused): it stays unfinished, and the store delivers it again.
    func deliver(_ transaction: StoreTransaction) async throws(KitError) {
        guard let store else { return }
        guard await client.currentUserID() != nil else { throw .notSignedIn }
        let cached = await entitlements.current()
        let fresh = try await kit { () async throws(FitBaseError) in try await entitlements.submitAppStoreTransaction(transaction.signedTransaction) }
        await store.finish(transactionID: transaction.id)
        await tierSettled(from: cached, to: fresh)
    }

    /// Premium videos and recommendations depend on the tier: when a refresh changed it, what was cached under the old
    /// one goes.
    private func tierSettled(from cached: Entitlements.Snapshot?, to fresh: Entitlements.Snapshot) async {
        guard cached?.entitlement.tier != fresh.entitlement.tier else { return }
        await cache.invalidate(prefix: "catalog:")
        await cache.invalidate(prefix: "recommendations:")
    }

    /// Without a purchase provider (Linux, a web build) nothing is bought here.
    static let purchasesUnavailable = KitError(
        .purchaseFailed, message: "Purchases are not available on this device.", isRetryable: false)
    /// A product the server does not list.
    static let notSold = KitError(.notFound, message: "This subscription is not available.", isRetryable: false)
}

import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``BillingService`` over the SDK's ``Entitlements`` (the server's resolved entitlement, cached for offline launches)
/// and a ``PurchaseProvider`` (StoreKit 2 in the app). The cached entitlement honours its expiry offline: a
/// subscription whose period has ended counts as free until the server says it renewed. Every transaction the store
/// delivers goes to the server and is finished only once the server took it; one it did not take stays unfinished,
/// and the store delivers it again.
public struct LiveBillingService: BillingService {
    let client: FitBaseClient
    let entitlements: Entitlements
    let store: (any PurchaseProvider)?
    let products: [SubscriptionProduct]
    let cache: ResponseCache
    let ttl: Duration
    let clock: any KitClock

    public func offers() async throws(KitError) -> [TierOffer] {
        var priced = products
        if let store, let known = try? await store.products(ids: products.map(\.id)) {
            let byID = Dictionary(known.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            priced = products.compactMap { product in
                guard let storeProduct = byID[product.id] else { return nil }
                var product = product
                product.displayName = storeProduct.displayName
                product.displayPrice = storeProduct.displayPrice
                product.hasFreeTrial = storeProduct.hasFreeTrial
                return product
            }
        }
        let snapshot = await entitlements.current()
        return SubscriptionTier.allCases.sorted().map { tier in
            let features = snapshot.map { snapshot in Set(snapshot.features.filter { $0.value.requiredTier <= tier }.keys) }
                ?? TierFeatures.standard.features[tier] ?? []
            return TierOffer(
                tier: tier, features: features,
                products: priced.filter { $0.tier == tier }.sorted { ($0.period == .monthly ? 0 : 1) < ($1.period == .monthly ? 0 : 1) }
            )
        }
    }

    public func entitlement(policy: CachePolicy) async throws(KitError) -> Loaded<EntitlementState> {
        let cached = await entitlements.current()
        if let cached, policy != .revalidate, clock.now.timeIntervalSince(cached.fetchedAt) < ttl.timeInterval {
            return Loaded(state(cached), source: .cache, fetchedAt: cached.fetchedAt)
        }
        if policy == .cacheOnly {
            guard let cached else { throw .offline }
            return Loaded(state(cached), source: .staleCache, fetchedAt: cached.fetchedAt)
        }
        do throws(FitBaseError) {
            let fresh = try await entitlements.refresh()
            await tierSettled(from: cached, to: fresh)
            return Loaded(state(fresh), source: .server, fetchedAt: fresh.fetchedAt)
        } catch {
            if case .transport = error, let cached { return Loaded(state(cached), source: .staleCache, fetchedAt: cached.fetchedAt) }
            throw KitError(error)
        }
    }

    /// The snapshot as it stands now on the clock (an ended period grants nothing).
    private func state(_ snapshot: Entitlements.Snapshot) -> EntitlementState {
        let effective = snapshot.effective(at: clock.now)
        return EntitlementState(
            entitlement: effective.entitlement,
            features: effective.features.mapValues { EntitlementState.FeatureAccess(allowed: $0.allowed, requiredTier: $0.requiredTier) }
        )
    }

    public func requiresUpgrade(for feature: Feature) async -> SubscriptionTier? {
        guard let snapshot = await entitlements.current() else { return TierFeatures.standard.requiredTier(for: feature) }
        return state(snapshot).requiresUpgrade(for: feature)
    }

    public func entitlementUpdates() async -> AsyncStream<EntitlementState> {
        let snapshots = await entitlements.updates()
        let (stream, continuation) = AsyncStream<EntitlementState>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let clock = clock
        let task = Task {
            for await snapshot in snapshots {
                let effective = snapshot.effective(at: clock.now)
                continuation.yield(EntitlementState(
                    entitlement: effective.entitlement,
                    features: effective.features.mapValues { EntitlementState.FeatureAccess(allowed: $0.allowed, requiredTier: $0.requiredTier) }
                ))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func purchase(productID: String) async throws(KitError) -> PurchaseResult {
        guard let store else { throw KitError(.purchaseFailed, message: "Purchases are not available on this device.", isRetryable: false) }
        guard let userID = await client.currentUserID() else { throw .notSignedIn }
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
                return .purchased(state(snapshot))
            } catch {
                throw KitError(error)
            }
        case .pending:
            return .pending
        case .cancelled:
            return .cancelled
        }
    }

    public func restorePurchases() async throws(KitError) -> EntitlementState {
        guard let store else { throw KitError(.purchaseFailed, message: "Purchases are not available on this device.", isRetryable: false) }
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
            return state(snapshot)
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
}

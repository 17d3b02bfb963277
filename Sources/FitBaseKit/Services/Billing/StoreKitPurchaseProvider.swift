#if canImport(StoreKit)
import FitBaseCore
import Foundation
import StoreKit

/// ``PurchaseProvider`` over StoreKit 2: products and prices from `Product.products(for:)`, purchases with the user's id
/// as the app account token, restores through `AppStore.sync()` and `Transaction.currentEntitlements`, and the
/// transactions StoreKit delivers outside a purchase from `Transaction.updates` (renewals, Ask to Buy approvals,
/// purchases on other devices, refunds; at launch, those left unfinished).
///
/// Only transactions StoreKit verified on the device are handed on — the server verifies each again and is the one
/// that grants. No transaction is finished here on delivery: ``LiveBillingService`` finishes it once the server has
/// taken it, so one the server did not get (offline, nobody signed in) is delivered again.
///
/// ```swift
/// let dependencies = try FitBaseDependencies.live(.init(
///     serverURL: server, dataDirectory: .applicationSupportDirectory, tokenStore: KeychainTokenStore(),
///     purchaseProvider: StoreKitPurchaseProvider(), products: products
/// ))
/// ```
///
/// Build one at launch, with the dependencies: the live container listens to `Transaction.updates` from then on, as
/// StoreKit asks apps to, so no transaction is missed.
public actor StoreKitPurchaseProvider: PurchaseProvider {
    /// The transactions handed on and not finished yet, by StoreKit id.
    private var delivered: [Transaction.ID: Transaction] = [:]
    /// The products loaded so far, by product id (a purchase needs the `Product`).
    private var loaded: [String: Product] = [:]

    /// A provider over the App Store the app is signed in to.
    public init() {}

    public func products(ids: [String]) async throws -> [StoreProduct] {
        var products: [StoreProduct] = []
        for product in try await Product.products(for: ids) {
            loaded[product.id] = product
            // A free trial is offered only to someone who has not had the group's introductory offer yet.
            let freeTrial = product.subscription?.introductoryOffer?.paymentMode == .freeTrial
            let eligible = await product.subscription?.isEligibleForIntroOffer ?? false
            products.append(StoreProduct(id: product.id, displayName: product.displayName, displayPrice: product.displayPrice, hasFreeTrial: freeTrial && eligible))
        }
        return products
    }

    public func purchase(productID: String, appAccountToken: UUID?) async throws -> StorePurchaseOutcome {
        guard let product = try await product(productID) else {
            throw KitError(.notFound, message: "This subscription is not available.", isRetryable: false)
        }
        var options: Set<Product.PurchaseOption> = []
        if let appAccountToken { options.insert(.appAccountToken(appAccountToken)) }
        switch try await product.purchase(options: options) {
        case .success(let result):
            guard let transaction = handOn(result) else {
                throw KitError(.purchaseFailed, message: "The App Store could not verify this purchase.", isRetryable: false)
            }
            return .purchased(transaction)
        case .pending:
            return .pending
        case .userCancelled:
            return .cancelled
        @unknown default:
            throw KitError(.purchaseFailed)
        }
    }

    public func restore() async throws -> [String] {
        try await AppStore.sync()
        var signed: [String] = []
        for await result in Transaction.currentEntitlements {
            if case .verified = result { signed.append(result.jwsRepresentation) }
        }
        return signed
    }

    public func unfinishedTransactions() async -> [StoreTransaction] {
        var transactions: [StoreTransaction] = []
        for await result in Transaction.unfinished {
            if let transaction = handOn(result) { transactions.append(transaction) }
        }
        return transactions
    }

    public func transactionUpdates() -> AsyncStream<StoreTransaction> {
        let (stream, continuation) = AsyncStream<StoreTransaction>.makeStream()
        let task = Task { [weak self] in
            for await result in Transaction.updates {
                guard let self else { break }
                if let transaction = await self.handOn(result) { continuation.yield(transaction) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func finish(transactionID: String) async {
        guard let id = Transaction.ID(transactionID) else { return }
        if let transaction = delivered.removeValue(forKey: id) {
            await transaction.finish()
            return
        }
        // Handed on by an earlier provider (another launch): StoreKit still lists it among the unfinished.
        for await result in Transaction.unfinished {
            if case .verified(let transaction) = result, transaction.id == id {
                await transaction.finish()
                return
            }
        }
    }

    /// The product with this id, loaded once.
    private func product(_ id: String) async throws -> Product? {
        if let product = loaded[id] { return product }
        let product = try await Product.products(for: [id]).first
        if let product { loaded[id] = product }
        return product
    }

    /// A transaction StoreKit verified, kept until it is finished, as the server gets it; `nil` for one it did not.
    private func handOn(_ result: VerificationResult<Transaction>) -> StoreTransaction? {
        guard case .verified(let transaction) = result else { return nil }
        delivered[transaction.id] = transaction
        return StoreTransaction(id: String(transaction.id), productID: transaction.productID, signedTransaction: result.jwsRepresentation)
    }
}
#endif

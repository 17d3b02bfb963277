import FitBaseKit
import Foundation
import StoreKit
import Testing

/// ``StoreKitPurchaseProvider`` over StoreKit 2: prices, purchases, restores, and the transactions StoreKit delivers,
/// handed on only when verified and finished only when the app says so.
@Suite(.serialized) struct StoreKitPurchaseProviderTests {
    init() {
        _StoreKitShim.reset()
        _StoreKitShim.addProduct(id: "pro.monthly", displayName: "Pro", displayPrice: "€4.99", freeTrial: true)
        _StoreKitShim.addProduct(
            id: "premium.yearly", displayName: "Premium", displayPrice: "€59.99", group: "premium", freeTrial: true,
            eligibleForIntroOffer: false)
    }

    @Test func pricesComeFromTheAppStoreAndAFreeTrialOnlyForThoseEligible() async throws {
        let products = try await StoreKitPurchaseProvider().products(ids: ["pro.monthly", "premium.yearly", "gone"])
        #expect(
            products == [
                StoreProduct(id: "pro.monthly", displayName: "Pro", displayPrice: "€4.99", hasFreeTrial: true),
                StoreProduct(id: "premium.yearly", displayName: "Premium", displayPrice: "€59.99", hasFreeTrial: false),
            ])
    }

    @Test func aPurchaseCarriesTheUsersIDAndHandsOnTheSignedTransactionUnfinished() async throws {
        let provider = StoreKitPurchaseProvider()
        let user = UUID()
        guard
            case .purchased(let transaction) = try await provider.purchase(
                productID: "pro.monthly", appAccountToken: user)
        else {
            Issue.record("not purchased")
            return
        }
        #expect(_StoreKitShim.purchaseOptions.map(_StoreKitShim.appAccountToken(in:)) == [user])
        #expect(transaction.productID == "pro.monthly")
        #expect(transaction.signedTransaction == "jws.pro.monthly.\(transaction.id)")
        let id = try #require(UInt64(transaction.id))
        #expect(!_StoreKitShim.isFinished(id))
        await provider.finish(transactionID: transaction.id)
        #expect(_StoreKitShim.isFinished(id))
    }

    @Test func aPurchaseStoreKitCouldNotVerifyIsRefused() async {
        _StoreKitShim.setNextPurchase(.purchased(verified: false))
        await #expect {
            try await StoreKitPurchaseProvider().purchase(productID: "pro.monthly", appAccountToken: nil)
        } throws: { error in
            (error as? KitError)?.kind == .purchaseFailed
        }
    }

    @Test func pendingCancelledAndUnknownPurchases() async throws {
        let provider = StoreKitPurchaseProvider()
        _StoreKitShim.setNextPurchase(.pending)
        #expect(try await provider.purchase(productID: "pro.monthly", appAccountToken: nil) == .pending)
        _StoreKitShim.setNextPurchase(.cancelled)
        #expect(try await provider.purchase(productID: "pro.monthly", appAccountToken: nil) == .cancelled)
        await #expect { try await provider.purchase(productID: "gone", appAccountToken: nil) } throws: { error in
            (error as? KitError)?.kind == .notFound
        }
    }

    @Test func updatesHandOnVerifiedTransactionsOnly() async throws {
        let provider = StoreKitPurchaseProvider()
        let updates = await provider.transactionUpdates()
        for _ in 0..<100 where _StoreKitShim.listenerCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
        _StoreKitShim.deliverUpdate(productID: "pro.monthly", verified: false)
        let renewal = _StoreKitShim.deliverUpdate(productID: "pro.monthly")
        var iterator = updates.makeAsyncIterator()
        let handed = try #require(await iterator.next())
        #expect(
            handed == StoreTransaction(id: String(renewal.id), productID: "pro.monthly", signedTransaction: renewal.jws)
        )
        // Handed on is not finished: the server has not taken it yet.
        #expect(!_StoreKitShim.isFinished(renewal.id))
        await provider.finish(transactionID: handed.id)
        #expect(_StoreKitShim.isFinished(renewal.id))
    }

    @Test func aTransactionNotFinishedIsDeliveredAgainAtTheNextLaunch() async throws {
        let renewal = _StoreKitShim.deliverUpdate(productID: "pro.monthly")
        _StoreKitShim.deliverUpdate(productID: "pro.monthly", verified: false)
        // The next launch: a new provider lists the unfinished transaction StoreKit verified.
        let relaunched = StoreKitPurchaseProvider()
        let unfinished = await relaunched.unfinishedTransactions()
        #expect(unfinished.map(\.id) == [String(renewal.id)])
        // A provider that never handed it on still finishes it (through StoreKit's unfinished transactions).
        await StoreKitPurchaseProvider().finish(transactionID: String(renewal.id))
        #expect(_StoreKitShim.isFinished(renewal.id))
        #expect(await relaunched.unfinishedTransactions().isEmpty)
    }

    @Test func restoringSyncsWithTheAppStoreAndSendsTheVerifiedEntitlements() async throws {
        _StoreKitShim.setEntitlements([("pro.monthly", true), ("premium.yearly", false)])
        let signed = try await StoreKitPurchaseProvider().restore()
        #expect(_StoreKitShim.syncCount == 1)
        #expect(signed.count == 1)
        #expect(signed.first?.hasPrefix("jws.pro.monthly.") == true)
    }

    @Test func aFailedSyncIsAnError() async {
        _StoreKitShim.failNextCall(with: CocoaError(.userCancelled))
        await #expect(throws: CocoaError.self) { try await StoreKitPurchaseProvider().restore() }
    }
}

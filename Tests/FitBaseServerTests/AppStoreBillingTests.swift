import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// StoreKit 2 transactions and App Store Server Notifications V2 against the real application, signed by a test
/// chain the server is configured to trust.
@Suite struct AppStoreBillingTests {
    static let signer = BillingFixture.signer

    static func withBillingApp(_ engine: DatabaseEngine, _ test: @escaping @Sendable (any TestClientProtocol, TestApp) async throws -> Void) async throws {
        try await withApp(engine, options: .init(billing: try BillingFixture.configuration()), test)
    }

    static func status(_ client: any TestClientProtocol, _ token: String) async throws -> [String: Any] {
        let response = try await client.json(.get, "/v1/subscription", token: token)
        try #require(response.status == .ok, "\(String(buffer: response.body))")
        return try json(response)
    }

    static func notify(_ client: any TestClientProtocol, _ payload: String) async throws -> TestResponse {
        try await client.json(.post, "/v1/webhooks/appstore", body: ["signedPayload": payload])
    }

    static func claim(_ client: any TestClientProtocol, _ token: String, _ transaction: AppStoreTransaction, signer: AppStoreTestSigner = signer) async throws -> TestResponse {
        try await client.json(.post, "/v1/subscription/appstore/transactions", body: ["signedTransaction": try signer.sign(transaction)], token: token)
    }

    /// A fresh original transaction id (digits, as Apple's are).
    static func originalID() -> String { String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999)) }

    static func days(_ count: Double) -> Date { Date.now.addingTimeInterval(count * 86_400) }

    @Test(arguments: TestEngines.all)
    func aSubscriptionLivesThroughEveryNotification(engine: DatabaseEngine) async throws {
        try await Self.withBillingApp(engine) { client, _ in
            let account = try await client.signUp()
            let user = try #require(UUID(uuidString: account.id))
            let original = Self.originalID()
            var clock = Date.now.addingTimeInterval(-3600)
            /// Sends one notification signed a minute after the previous one and returns the caller's status.
            func step(
                _ type: String, _ subtype: String? = nil, expires: Date?, revoked: Date? = nil, renews: Int = 1, retrying: Bool = false,
                grace: Date? = nil, product: String = "com.train.pro.monthly"
            ) async throws -> [String: Any] {
                clock = clock.addingTimeInterval(60)
                let transaction = AppStoreTestSigner.transaction(
                    productId: product, originalTransactionId: original, transactionId: Self.originalID(), expiresDate: expires,
                    signedDate: clock, appAccountToken: user, revocationDate: revoked
                )
                let renewal = AppStoreTestSigner.renewalInfo(
                    productId: product, originalTransactionId: original, autoRenewStatus: renews, signedDate: clock,
                    isInBillingRetryPeriod: retrying, gracePeriodExpiresDate: grace
                )
                let response = try await Self.notify(
                    client, try Self.signer.notification(type: type, subtype: subtype, transaction: transaction, renewal: renewal, signedDate: clock)
                )
                #expect(response.status == .ok, "\(type): \(String(buffer: response.body))")
                #expect(try json(response)["result"] as? String == "processed")
                return try await Self.status(client, account.accessToken)
            }

            var status = try await step("SUBSCRIBED", "INITIAL_BUY", expires: Self.days(30))
            #expect(status["tier"] as? String == "pro" && status["status"] as? String == "active")
            #expect(status["source"] as? String == "appStore")
            #expect((status["features"] as? [String])?.contains("customPlans") == true)

            let sixtyDays = Self.days(60)
            status = try await step("DID_RENEW", expires: sixtyDays)
            #expect(status["status"] as? String == "active")
            let renewedUntil = try #require((status["expiresAt"] as? String).flatMap(InternetDateTime.date(from:)))
            #expect(abs(renewedUntil.timeIntervalSince(sixtyDays)) < 1)

            status = try await step("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", expires: Self.days(60), renews: 0)
            #expect(status["tier"] as? String == "pro" && status["status"] as? String == "cancelled" && status["willRenew"] as? Bool == false)

            status = try await step("DID_CHANGE_RENEWAL_PREF", "UPGRADE", expires: Self.days(30), product: "com.train.premium.monthly")
            #expect(status["tier"] as? String == "premium" && status["status"] as? String == "active")

            status = try await step(
                "DID_FAIL_TO_RENEW", "GRACE_PERIOD", expires: Self.days(-0.01), retrying: true, grace: Self.days(6), product: "com.train.premium.monthly"
            )
            #expect(status["tier"] as? String == "premium" && status["status"] as? String == "gracePeriod")

            status = try await step("GRACE_PERIOD_EXPIRED", expires: Self.days(-0.01), retrying: true, grace: Self.days(-0.001))
            #expect(status["tier"] as? String == "free" && status["status"] as? String == "billingRetry")

            status = try await step("DID_FAIL_TO_RENEW", expires: Self.days(-0.01), retrying: true)
            #expect(status["tier"] as? String == "free" && status["status"] as? String == "billingRetry")

            status = try await step("SUBSCRIBED", "RESUBSCRIBE", expires: Self.days(30))
            #expect(status["tier"] as? String == "pro" && status["status"] as? String == "active")

            status = try await step("OFFER_REDEEMED", "UPGRADE", expires: Self.days(30))
            #expect(status["status"] as? String == "active")

            status = try await step("REFUND", expires: Self.days(30), revoked: Date.now.addingTimeInterval(-1))
            #expect(status["tier"] as? String == "free" && status["status"] as? String == "revoked" && status["willRenew"] as? Bool == false)

            status = try await step("REFUND_REVERSED", expires: Self.days(30))
            #expect(status["tier"] as? String == "pro" && status["status"] as? String == "active")

            status = try await step("REVOKE", expires: Self.days(30), revoked: Date.now.addingTimeInterval(-1))
            #expect(status["tier"] as? String == "free" && status["status"] as? String == "revoked")

            status = try await step("SUBSCRIBED", "RESUBSCRIBE", expires: Self.days(30))
            status = try await step("EXPIRED", "VOLUNTARY", expires: Self.days(-0.01), renews: 0)
            #expect(status["tier"] as? String == "free" && status["status"] as? String == "expired")
            #expect((status["subscriptions"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test(arguments: TestEngines.all)
    func aNotificationIsProcessedOnceAndOlderNewsChangesNothing(engine: DatabaseEngine) async throws {
        try await Self.withBillingApp(engine) { client, _ in
            let account = try await client.signUp()
            let user = try #require(UUID(uuidString: account.id))
            let original = Self.originalID()
            let renewedUntil = Self.days(60)
            let later = AppStoreTestSigner.transaction(originalTransactionId: original, expiresDate: renewedUntil, appAccountToken: user)
            let renewed = try Self.signer.notification(type: "DID_RENEW", transaction: later, signedDate: .now)
            #expect(try json(try await Self.notify(client, renewed))["result"] as? String == "processed")
            #expect(try json(try await Self.notify(client, renewed))["result"] as? String == "duplicate")

            // Delivered late: signed before the renewal, it must not roll the expiry back.
            let earlier = AppStoreTestSigner.transaction(originalTransactionId: original, expiresDate: Self.days(30), appAccountToken: user)
            let subscribed = try Self.signer.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: earlier, signedDate: Date.now.addingTimeInterval(-600))
            #expect(try json(try await Self.notify(client, subscribed))["result"] as? String == "processed")
            let status = try await Self.status(client, account.accessToken)
            let expires = try #require((status["expiresAt"] as? String).flatMap(InternetDateTime.date(from:)))
            #expect(abs(expires.timeIntervalSince(renewedUntil)) < 1)

            let test = try Self.signer.notification(type: "TEST")
            #expect(try await Self.notify(client, test).status == .ok)

            // A type FitBase does not act on (carrying an older transaction) is acknowledged and changes nothing.
            let consumption = try Self.signer.notification(type: "CONSUMPTION_REQUEST", transaction: earlier, signedDate: .now)
            #expect(try json(try await Self.notify(client, consumption))["result"] as? String == "processed")
            let unchanged = try #require((try await Self.status(client, account.accessToken)["expiresAt"] as? String).flatMap(InternetDateTime.date(from:)))
            #expect(abs(unchanged.timeIntervalSince(renewedUntil)) < 1)
        }
    }

    @Test(arguments: TestEngines.all)
    func aNotificationBeforeAnyClaimCountsOnceTheSubscriptionIsClaimed(engine: DatabaseEngine) async throws {
        try await Self.withBillingApp(engine) { client, _ in
            let buyer = try await client.signUp()
            let other = try await client.signUp()
            let original = Self.originalID()
            let purchase = AppStoreTestSigner.transaction(originalTransactionId: original, expiresDate: Self.days(30), signedDate: Date.now.addingTimeInterval(-300))
            let renewal = AppStoreTestSigner.transaction(productId: "com.train.premium.monthly", originalTransactionId: original, expiresDate: Self.days(30))
            #expect(try await Self.notify(client, try Self.signer.notification(type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", transaction: renewal)).status == .ok)
            #expect(try await Self.status(client, buyer.accessToken)["tier"] as? String == "free")

            // The app sends the (older) purchase: the buyer claims the subscription and gets its newest state.
            let claimed = try await Self.claim(client, buyer.accessToken, purchase)
            #expect(claimed.status == .ok, "\(String(buffer: claimed.body))")
            #expect(try json(claimed)["tier"] as? String == "premium")
            #expect(try await Self.claim(client, buyer.accessToken, purchase).status == .ok)  // restoring again is harmless

            let stolen = try await Self.claim(client, other.accessToken, purchase)
            #expect(stolen.status == .conflict)
            try expectProblem(stolen, .transactionClaimed)
            #expect(try await Self.status(client, other.accessToken)["tier"] as? String == "free")
        }
    }

    @Test(arguments: TestEngines.all)
    func theTransactionEndpointChecksWhatItIsSent(engine: DatabaseEngine) async throws {
        try await Self.withBillingApp(engine) { client, _ in
            let account = try await client.signUp()
            let stranger = UUID()
            let mismatch = try await Self.claim(client, account.accessToken, AppStoreTestSigner.transaction(originalTransactionId: Self.originalID(), appAccountToken: stranger))
            #expect(mismatch.status == .forbidden)
            try expectProblem(mismatch, .appAccountTokenMismatch)

            let unknown = try await Self.claim(client, account.accessToken, AppStoreTestSigner.transaction(productId: "com.other.app.gold", originalTransactionId: Self.originalID()))
            #expect(unknown.status == .badRequest)
            #expect((try json(unknown)["errors"] as? [[String: Any]])?.first?["field"] as? String == "signedTransaction")

            let foreignChain = try AppStoreTestSigner()
            let forged = try await Self.claim(client, account.accessToken, AppStoreTestSigner.transaction(originalTransactionId: Self.originalID()), signer: foreignChain)
            #expect(forged.status == .badRequest)
            try expectProblem(forged, .appstoreInvalidCertificateChain)

            let otherApp = try await Self.claim(client, account.accessToken, AppStoreTestSigner.transaction(bundleId: "com.example.other", originalTransactionId: Self.originalID()))
            try expectProblem(otherApp, .appstoreWrongBundleId)

            let production = try await Self.claim(client, account.accessToken, AppStoreTestSigner.transaction(environment: .production, originalTransactionId: Self.originalID()))
            try expectProblem(production, .appstoreWrongEnvironment)

            let badNotification = try await Self.notify(client, "not.a.jws")
            #expect(badNotification.status == .badRequest)
            #expect(try await Self.status(client, account.accessToken)["status"] as? String == "none")
        }
    }

    @Test(arguments: TestEngines.all)
    func withoutABundleIdTheAppStoreEndpointsAreUnavailable(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let response = try await Self.claim(client, account.accessToken, AppStoreTestSigner.transaction(originalTransactionId: Self.originalID()))
            #expect(response.status == .serviceUnavailable)
            try expectProblem(response, .appstoreNotConfigured)
            #expect(try await Self.notify(client, try Self.signer.notification(type: "TEST")).status == .serviceUnavailable)
        }
    }
}

import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// Stripe webhooks against the real application: signatures as Stripe computes them, events as Stripe sends them.
@Suite struct StripeBillingTests {
    static func send(_ client: any TestClientProtocol, _ payload: Data, signature: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let signature { headers[StripeWebhookMiddleware.signatureHeader] = signature }
        return try await client.execute(uri: "/v1/webhooks/stripe", method: .post, headers: headers, body: ByteBuffer(bytes: payload))
    }

    /// Sends a correctly signed event and expects it processed.
    static func deliver(_ client: any TestClientProtocol, _ type: String, created: Date = .now, id: String? = nil, _ object: [String: Any]) async throws -> String? {
        let payload = try BillingFixture.stripeEvent(type, id: id ?? "evt_\(UUID().uuidString.prefix(12))", created: created, object: object)
        let response = try await send(client, payload, signature: BillingFixture.stripeSignature(payload))
        #expect(response.status == .ok, "\(type): \(String(buffer: response.body))")
        return try json(response)["result"] as? String
    }

    static func subscription(
        _ id: String, customer: String, status: String, price: String = "price_train_premium_monthly", periodStart: Date = .now,
        periodEnd: Date = Date.now.addingTimeInterval(30 * 86_400), cancelAtPeriodEnd: Bool = false, invoice: String = "in_1"
    ) -> [String: Any] {
        [
            "id": id, "object": "subscription", "customer": customer, "status": status, "cancel_at_period_end": cancelAtPeriodEnd,
            "latest_invoice": invoice, "metadata": [:] as [String: String],
            // The 2025 API versions carry the period on the items; older ones on the subscription. Send the newer shape.
            "items": ["object": "list", "data": [[
                "id": "si_1", "price": ["id": price, "object": "price"],
                "current_period_start": Int(periodStart.timeIntervalSince1970), "current_period_end": Int(periodEnd.timeIntervalSince1970),
            ]]],
        ]
    }

    static func status(_ client: any TestClientProtocol, _ account: TestAccount) async throws -> [String: Any] {
        try json(try await client.json(.get, "/v1/subscription", token: account.accessToken))
    }

    @Test(arguments: TestEngines.all)
    func aWebSubscriptionFollowsItsEventsInAnyOrder(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(billing: try BillingFixture.configuration())) { client, _ in
            let account = try await client.signUp()
            let customer = "cus_\(UUID().uuidString.prefix(10))"
            let sub = "sub_\(UUID().uuidString.prefix(10))"
            let base = Date.now.addingTimeInterval(-600)
            func at(_ step: Double) -> Date { base.addingTimeInterval(step * 10) }

            // The subscription event may come before the checkout that names the user: it waits, unowned.
            _ = try await Self.deliver(client, "customer.subscription.created", created: at(1), Self.subscription(sub, customer: customer, status: "active"))
            #expect(try await Self.status(client, account)["tier"] as? String == "free")
            _ = try await Self.deliver(client, "checkout.session.completed", created: at(2), [
                "id": "cs_1", "object": "checkout.session", "mode": "subscription", "client_reference_id": account.id, "customer": customer,
                "subscription": sub,
            ])
            var status = try await Self.status(client, account)
            #expect(status["tier"] as? String == "premium" && status["status"] as? String == "active" && status["source"] as? String == "stripe")

            // Cancelled at period end: paid, so still premium. An older "active" event delivered late changes nothing.
            let cancelled = try await Self.deliver(client, "customer.subscription.updated", created: at(4), Self.subscription(sub, customer: customer, status: "active", cancelAtPeriodEnd: true))
            #expect(cancelled == "processed")
            _ = try await Self.deliver(client, "customer.subscription.updated", created: at(3), Self.subscription(sub, customer: customer, status: "active"))
            status = try await Self.status(client, account)
            #expect(status["tier"] as? String == "premium" && status["status"] as? String == "cancelled" && status["willRenew"] as? Bool == false)

            // A failed renewal ends access until a later event says it was paid.
            _ = try await Self.deliver(client, "invoice.payment_failed", created: at(5), [
                "id": "in_2", "object": "invoice", "customer": customer, "parent": ["subscription_details": ["subscription": sub]],
            ])
            status = try await Self.status(client, account)
            #expect(status["tier"] as? String == "free" && status["status"] as? String == "billingRetry")
            _ = try await Self.deliver(client, "customer.subscription.updated", created: at(6), Self.subscription(sub, customer: customer, status: "past_due", invoice: "in_2"))
            #expect(try await Self.status(client, account)["status"] as? String == "billingRetry")
            _ = try await Self.deliver(client, "customer.subscription.updated", created: at(7), Self.subscription(sub, customer: customer, status: "active", invoice: "in_2"))
            #expect(try await Self.status(client, account)["status"] as? String == "active")

            // A full refund of the invoice that paid for it revokes it at once; the same event again is a duplicate.
            let refundID = "evt_refund_\(UUID().uuidString.prefix(8))"
            let refund: [String: Any] = ["id": "ch_1", "object": "charge", "customer": customer, "invoice": "in_2", "refunded": true]
            #expect(try await Self.deliver(client, "charge.refunded", created: at(8), id: refundID, refund) == "processed")
            #expect(try await Self.deliver(client, "charge.refunded", created: at(8), id: refundID, refund) == "duplicate")
            status = try await Self.status(client, account)
            #expect(status["tier"] as? String == "free" && status["status"] as? String == "revoked")

            // A later invoice paid restores access; refunding an older invoice then leaves it alone.
            _ = try await Self.deliver(client, "customer.subscription.updated", created: at(8.5), Self.subscription(sub, customer: customer, status: "active", invoice: "in_3"))
            #expect(try await Self.status(client, account)["status"] as? String == "active")
            _ = try await Self.deliver(client, "charge.refunded", created: at(8.7), ["id": "ch_0", "object": "charge", "customer": customer, "invoice": "in_1", "refunded": true])
            #expect(try await Self.status(client, account)["status"] as? String == "active")

            // Within one second, the further-along status wins whatever the order of delivery.
            _ = try await Self.deliver(client, "customer.subscription.updated", created: at(8.9), Self.subscription(sub, customer: customer, status: "active", invoice: "in_3"))
            _ = try await Self.deliver(client, "customer.subscription.updated", created: at(8.9), Self.subscription(sub, customer: customer, status: "incomplete", invoice: "in_3"))
            #expect(try await Self.status(client, account)["status"] as? String == "active")

            // Ended for good.
            _ = try await Self.deliver(client, "customer.subscription.deleted", created: at(9), Self.subscription(sub, customer: customer, status: "canceled"))
            #expect(try await Self.status(client, account)["tier"] as? String == "free")
            // Events of types FitBase does not use are acknowledged.
            #expect(try await Self.deliver(client, "customer.updated", ["id": customer, "object": "customer"]) == "processed")
        }
    }

    @Test(arguments: TestEngines.all)
    func signaturesAreCheckedAsStripeChecksThem(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(billing: try BillingFixture.configuration())) { client, _ in
            let payload = try BillingFixture.stripeEvent("customer.updated", object: ["id": "cus_x", "object": "customer"])
            func code(_ signature: String?, _ body: Data = payload) async throws -> String? {
                let response = try await Self.send(client, body, signature: signature)
                return response.status == .ok ? "ok" : try json(response)["code"] as? String
            }
            #expect(try await code(BillingFixture.stripeSignature(payload)) == "ok")
            #expect(try await code(BillingFixture.stripeSignature(payload, secret: BillingFixture.stripeSecrets[1])) == "ok")
            #expect(try await code(BillingFixture.stripeSignature(payload, secret: "whsec_someone_else")) == "stripe_no_matching_signature")
            #expect(try await code(BillingFixture.stripeSignature(payload, at: Date.now.addingTimeInterval(-400))) == "stripe_timestamp_outside_tolerance")
            #expect(try await code(nil) == "stripe_missing_header")
            #expect(try await code("v1=abc") == "stripe_malformed_header")
            var tampered = payload
            tampered[tampered.startIndex + 10] ^= 0x01
            #expect(try await code(BillingFixture.stripeSignature(payload), tampered) == "stripe_no_matching_signature")
        }
    }

    @Test(arguments: TestEngines.all)
    func withoutSecretsTheStripeWebhookIsUnavailable(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let payload = try BillingFixture.stripeEvent("customer.updated", object: ["id": "cus_x"])
            let response = try await Self.send(client, payload, signature: BillingFixture.stripeSignature(payload))
            #expect(response.status == .serviceUnavailable)
        }
    }
}

import FitBaseCore
import Foundation
import Logging

/// Stripe subscriptions, from webhook events whose signature ``StripeWebhookMiddleware`` has checked.
///
/// | event | effect |
/// |---|---|
/// | `checkout.session.completed` | links the customer (and its subscriptions) to the user named by `client_reference_id` |
/// | `customer.subscription.created` / `.updated` / `.deleted` | the subscription's state from the object: `trialing` → trial; `active` → active (cancelled when `cancel_at_period_end`); `past_due` / `unpaid` → billing retry from the unpaid period's start; `canceled`, `incomplete_expired`, `paused`, `incomplete` → expired |
/// | `invoice.payment_failed` | billing retry: access ends until a later event says it was paid |
/// | `charge.refunded` (fully) | the subscription whose invoice it paid is revoked at once |
///
/// Every event id is processed once (recorded in the transaction of its effect). Stripe does not promise order: an
/// event created before the state held for a subscription changes nothing.
struct StripeSubscriptions: Sendable {
    let catalog: ProductCatalog
    let database: Database
    let logger: Logger

    /// What became of an event.
    enum Outcome: String, Sendable {
        case processed, duplicate
    }

    /// Applies a verified event (`payload` is its exact JSON).
    func receive(_ payload: some Collection<UInt8> & Sendable, now: Date) async throws -> Outcome {
        let event: StripeEvent
        do {
            event = try StripeObject.decoder.decode(StripeEvent.self, from: Data(payload))
        } catch {
            throw Problem.invalidRequest("The body is not a Stripe event (\(error)).")
        }
        let catalog = self.catalog
        let logger = self.logger
        return try await database.transaction { db in
            guard try await SubscriptionStore.markProcessed(.stripe, eventID: event.id, type: event.type, now: now, on: db) else {
                return .duplicate
            }
            let object = event.data.object
            switch event.type {
            case "checkout.session.completed":
                guard let customer = object.customer?.value, let reference = object.clientReferenceId, let uuid = UUID(uuidString: reference),
                    try await SubscriptionStore.userExists(UserID(rawValue: uuid), on: db)
                else {
                    logger.warning("Stripe checkout without a FitBase user in client_reference_id", metadata: ["event": "\(event.id)"])
                    return .processed
                }
                let user = UserID(rawValue: uuid)
                try await SubscriptionStore.linkCustomer(customer, to: user, on: db)
                for var record in try await SubscriptionStore.records(ofCustomer: customer, on: db) where record.user == nil {
                    record.user = user
                    try await SubscriptionStore.save(record, now: now, on: db)
                }
            case "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted":
                guard let id = object.id, let priceID = object.priceID else { return .processed }
                guard let tier = catalog.tier(of: priceID, in: .stripe) else {
                    logger.warning("Stripe subscription for a price the products file does not list", metadata: ["price": "\(priceID)"])
                    return .processed
                }
                var record = try await SubscriptionStore.lockedRecord(.stripe, externalID: id, now: now, on: db)
                if !record.isPlaceholder {
                    if record.stateAt > event.createdAt { return .processed }  // older news
                    // Stripe stamps events in whole seconds: within one second, the further-along status wins.
                    if record.stateAt == event.createdAt, Self.rank(object.status) < Self.rank(record.storeStatus) { return .processed }
                }
                // A refund revokes until a later invoice is paid.
                let paidAgain = object.latestInvoice != nil && object.latestInvoice?.value != record.latestInvoice
                    && ["active", "trialing"].contains(object.status ?? "")
                let revokedAt = record.isPlaceholder || paidAgain ? nil : record.state.revokedAt
                record.state = Self.state(of: object, priceID: priceID, tier: tier, at: event.createdAt, revokedAt: revokedAt)
                record.stateAt = event.createdAt
                record.storeStatus = object.status
                record.customerID = object.customer?.value ?? record.customerID
                record.latestInvoice = object.latestInvoice?.value ?? record.latestInvoice
                if record.user == nil, let customer = record.customerID { record.user = try await SubscriptionStore.customerOwner(customer, on: db) }
                try await SubscriptionStore.save(record, now: now, on: db)
            case "invoice.payment_failed":
                guard let id = object.invoiceSubscription, var record = try await SubscriptionStore.record(.stripe, externalID: id, on: db),
                    record.stateAt <= event.createdAt
                else { return .processed }
                record.state.isInBillingRetry = true
                record.state.expiresAt = min(record.state.expiresAt ?? event.createdAt, event.createdAt)
                record.stateAt = event.createdAt
                record.storeStatus = "past_due"
                try await SubscriptionStore.save(record, now: now, on: db)
            case "charge.refunded":
                guard object.refunded == true, let customer = object.customer?.value else { return .processed }
                let records = try await SubscriptionStore.records(ofCustomer: customer, on: db)
                // The subscription whose newest invoice the charge paid; a refund of an older invoice leaves access alone.
                // Without an invoice to match (newer API versions), a customer's only subscription is the one it paid.
                let paid = object.invoice.map { invoice in records.filter { $0.latestInvoice == invoice.value } } ?? (records.count == 1 ? records : [])
                for var record in paid where record.state.revokedAt == nil {
                    record.state.revokedAt = event.createdAt
                    try await SubscriptionStore.save(record, now: now, on: db)
                }
            default:
                break
            }
            return .processed
        }
    }

    /// How far along a Stripe status is, to order events of the same second.
    static func rank(_ status: String?) -> Int {
        switch status {
        case "canceled", "incomplete_expired": 4
        case "active", "trialing": 3
        case "past_due", "unpaid", "paused": 2
        case "incomplete": 1
        default: 0
        }
    }

    /// The state a Stripe subscription object describes at `eventAt`.
    static func state(of object: StripeObject, priceID: String, tier: SubscriptionTier, at eventAt: Date, revokedAt: Date?) -> SubscriptionState {
        func date(_ seconds: Int64?) -> Date? { seconds.map { Date(timeIntervalSince1970: TimeInterval($0)) } }
        var state = SubscriptionState(
            source: .stripe, productID: priceID, tier: tier, expiresAt: date(object.periodEnd), willRenew: object.cancelAtPeriodEnd != true,
            revokedAt: revokedAt
        )
        switch object.status {
        case "trialing":
            state.isTrial = true
            state.expiresAt = date(object.trialEnd) ?? state.expiresAt
        case "active":
            break
        case "past_due", "unpaid":
            // Stripe has already opened the period it could not charge for: access ends where that period began.
            state.isInBillingRetry = true
            state.expiresAt = date(object.periodStart) ?? eventAt
        default:  // canceled, incomplete, incomplete_expired, paused
            state.willRenew = false
            state.expiresAt = min(date(object.endedAt) ?? date(object.canceledAt) ?? eventAt, eventAt)
        }
        return state
    }
}

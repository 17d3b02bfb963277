import Foundation

/// The parts of Stripe's event JSON FitBase reads. Unknown fields are ignored; ids that Stripe may expand into
/// objects decode either way.
struct StripeEvent: Decodable, Sendable {
    let id: String
    let type: String
    /// Seconds since 1970.
    let created: Int64
    let data: Payload

    struct Payload: Decodable, Sendable {
        let object: StripeObject
    }

    var createdAt: Date { Date(timeIntervalSince1970: TimeInterval(created)) }
}

/// A Stripe id, sent as a string or, when expanded, as an object carrying `id`.
struct StripeID: Decodable, Sendable, Equatable {
    let value: String

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            value = text
        } else {
            value = try decoder.container(keyedBy: Key.self).decode(String.self, forKey: .id)
        }
    }

    private enum Key: String, CodingKey { case id }
}

/// The `data.object` of the events FitBase handles: a subscription, checkout session, invoice or charge. Every field
/// is optional here; each handler checks what it needs.
struct StripeObject: Decodable, Sendable {
    let id: String?
    let object: String?
    let customer: StripeID?
    // Subscription
    let status: String?
    let cancelAtPeriodEnd: Bool?
    let currentPeriodStart: Int64?
    let currentPeriodEnd: Int64?
    let trialEnd: Int64?
    let endedAt: Int64?
    let canceledAt: Int64?
    let latestInvoice: StripeID?
    let items: List<SubscriptionItem>?
    // Checkout session
    let clientReferenceId: String?
    let subscription: StripeID?
    let mode: String?
    // Invoice (newer API versions name the subscription under parent.subscription_details)
    let parent: InvoiceParent?
    // Charge
    let invoice: StripeID?
    let refunded: Bool?

    struct List<Item: Decodable & Sendable>: Decodable, Sendable {
        let data: [Item]
    }

    struct SubscriptionItem: Decodable, Sendable {
        let price: Price?
        let currentPeriodStart: Int64?
        let currentPeriodEnd: Int64?
    }

    struct Price: Decodable, Sendable {
        let id: String
    }

    struct InvoiceParent: Decodable, Sendable {
        let subscriptionDetails: SubscriptionDetails?
    }

    struct SubscriptionDetails: Decodable, Sendable {
        let subscription: StripeID?
    }

    /// The price of the subscription's first item (FitBase sells one price per subscription).
    var priceID: String? { items?.data.first?.price?.id }
    /// The current period's bounds: on the subscription in older API versions, on its items in newer ones.
    var periodStart: Int64? { currentPeriodStart ?? items?.data.first?.currentPeriodStart }
    var periodEnd: Int64? { currentPeriodEnd ?? items?.data.first?.currentPeriodEnd }
    /// An invoice's subscription, in either API shape.
    var invoiceSubscription: String? { subscription?.value ?? parent?.subscriptionDetails?.subscription?.value }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()
}

import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// One store subscription as FitBase holds it.
struct SubscriptionRecord: Sendable, Equatable {
    var id: UUID
    /// The account that claimed it; `nil` while no one has (its notifications still apply, and count once claimed).
    var user: UserID?
    /// The store's id: App Store original transaction id, Stripe subscription id, or the grant's id.
    var externalID: String
    var state: SubscriptionState
    /// The store's time of this state (signed date, event creation); a notification older than it changes nothing.
    var stateAt: Date
    var environment: String?
    /// Stripe: the customer and the newest invoice (refunds name invoices).
    var customerID: String?
    var latestInvoice: String?
    /// The store's status word (Stripe's `status`), which breaks ties between events of the same second.
    var storeStatus: String?

    /// A row made to be locked before its first state is known (see ``SubscriptionStore/lockedRecord(_:externalID:now:on:)``).
    var isPlaceholder: Bool { stateAt == .distantPast }
}

/// SQL for subscriptions and processed notifications. Writers run inside the caller's transaction.
struct SubscriptionStore: Sendable {
    let database: Database

    /// Every subscription state of `user`.
    func states(of user: UserID) async throws -> [SubscriptionState] {
        try await database.withConnection { db in
            try await Self.select(on: db).where("user_id", .equal, user.rawValue).all().map(Self.record).map(\.state)
        }
    }

    /// The records of `user`, newest state first.
    static func records(of user: UserID, on db: any SQLDatabase) async throws -> [SubscriptionRecord] {
        try await select(on: db).where("user_id", .equal, user.rawValue).orderBy("state_at", .descending).all().map(record)
    }

    /// Every claimed subscription (the console's dashboard counts them by tier and status).
    static func claimed(on db: any SQLDatabase) async throws -> [SubscriptionRecord] {
        try await select(on: db).where("user_id", .isNot, SQLLiteral.null).all().map(record)
    }

    /// The record of a store subscription, locked for the rest of the transaction on PostgreSQL.
    static func record(_ source: EntitlementSource, externalID: String, on db: any SQLDatabase) async throws -> SubscriptionRecord? {
        try await select(on: db).where("source", .equal, source.rawValue).where("external_id", .equal, externalID)
            .for(.update).first().map(record)
    }

    /// The record of a store subscription, locked for the rest of the transaction; a placeholder (``SubscriptionRecord/isPlaceholder``)
    /// is inserted first when there is none, so two first writers (the app's claim and Apple's notification) take
    /// turns instead of one failing on the unique key. A placeholder grants nothing (free tier, expired).
    static func lockedRecord(_ source: EntitlementSource, externalID: String, now: Date, on db: any SQLDatabase) async throws -> SubscriptionRecord {
        let placeholder = SubscriptionRecord(
            id: UUID.random(), user: nil, externalID: externalID,
            state: SubscriptionState(source: source, productID: "", tier: .free, expiresAt: .distantPast, willRenew: false), stateAt: .distantPast
        )
        try await insertIgnoringDuplicates(placeholder, now: now, on: db)
        guard let locked = try await record(source, externalID: externalID, on: db) else { throw SubscriptionStoreError.vanished }
        return locked
    }

    /// Stripe subscriptions of a customer, locked on PostgreSQL.
    static func records(ofCustomer customerID: String, on db: any SQLDatabase) async throws -> [SubscriptionRecord] {
        try await select(on: db).where("source", .equal, EntitlementSource.stripe.rawValue).where("customer_id", .equal, customerID)
            .for(.update).all().map(record)
    }

    /// Inserts or replaces `record` by id. When that changes what its owner holds (a new owner, or a new state), the
    /// owner's devices are told in the same transaction: a `subscription` event on the user's stream with the
    /// entitlement resolved from all their subscriptions, so an app refreshes without waiting for its next launch.
    static func save(_ record: SubscriptionRecord, now: Date, on db: any SQLDatabase) async throws {
        let before = try await select(on: db).where("id", .equal, record.id).first().map(Self.record)
        let values = columnValues(record, now: now)
        try await db.insert(into: "subscriptions")
            .columns(["id", "created_at"] + values.map(\.0))
            .values([SQLBind(record.id), SQLBind(now)] + values.map { SQLBind($0.1) })
            .onConflict(with: ["id"]) { conflict in values.reduce(conflict) { $0.set(excludedValueOf: $1.0) } }
            .run()
        guard let owner = record.user, before?.user != owner || before.map({ Self.toTheMillisecond($0.state) }) != Self.toTheMillisecond(record.state)
        else { return }
        let entitlement = EntitlementResolver().resolve(try await records(of: owner, on: db).map(\.state), at: now)
        try await EventLog.append(
            topic: .user(owner), type: subscriptionChanged, data: SubscriptionChange(tier: entitlement.tier, status: entitlement.status),
            now: now, on: db
        )
    }

    /// `state` with its instants to the millisecond, the stores' precision: a state read back from the database (whose
    /// own precision and arithmetic may move an instant by less) compares equal to the same state written again.
    private static func toTheMillisecond(_ state: SubscriptionState) -> SubscriptionState {
        func rounded(_ date: Date?) -> Date? { date.map { Date(timeIntervalSince1970: ($0.timeIntervalSince1970 * 1000).rounded() / 1000) } }
        var state = state
        state.expiresAt = rounded(state.expiresAt)
        state.gracePeriodExpiresAt = rounded(state.gracePeriodExpiresAt)
        state.revokedAt = rounded(state.revokedAt)
        return state
    }

    /// The type of the event that tells a user's devices their entitlement changed.
    static let subscriptionChanged = "subscription"

    /// A `subscription` event's data: the user's entitlement after the change.
    struct SubscriptionChange: Encodable {
        let tier: SubscriptionTier
        let status: EntitlementStatus
    }

    private static func insertIgnoringDuplicates(_ record: SubscriptionRecord, now: Date, on db: any SQLDatabase) async throws {
        let values = columnValues(record, now: now)
        try await db.insert(into: "subscriptions")
            .columns(["id", "created_at"] + values.map(\.0))
            .values([SQLBind(record.id), SQLBind(now)] + values.map { SQLBind($0.1) })
            .ignoringConflicts(with: ["source", "external_id"])
            .run()
    }

    private static func columnValues(_ record: SubscriptionRecord, now: Date) -> [(String, any Encodable & Sendable)] {
        let state = record.state
        return [
            ("user_id", record.user?.rawValue), ("source", state.source.rawValue), ("external_id", record.externalID),
            ("product_id", state.productID), ("tier", state.tier.rawValue), ("expires_at", state.expiresAt), ("is_trial", state.isTrial),
            ("will_renew", state.willRenew), ("grace_expires_at", state.gracePeriodExpiresAt), ("in_billing_retry", state.isInBillingRetry),
            ("revoked_at", state.revokedAt), ("state_at", record.stateAt), ("environment", record.environment),
            ("customer_id", record.customerID), ("latest_invoice", record.latestInvoice), ("store_status", record.storeStatus),
            ("updated_at", now),
        ]
    }

    /// Records that a store's notification is being processed; `false` when it was processed before (the caller then
    /// changes nothing). Written in the transaction of the notification's effect, so a failure leaves it unprocessed.
    static func markProcessed(_ source: EntitlementSource, eventID: String, type: String, now: Date, on db: any SQLDatabase) async throws -> Bool {
        let inserted = try await db.insert(into: "billing_events")
            .columns("source", "event_id", "type", "received_at")
            .values(SQLBind(source.rawValue), SQLBind(eventID), SQLBind(type), SQLBind(now))
            .ignoringConflicts(with: ["source", "event_id"])
            .returning("event_id")
            .all()
        return !inserted.isEmpty
    }

    /// The user a Stripe customer belongs to.
    static func customerOwner(_ customerID: String, on db: any SQLDatabase) async throws -> UserID? {
        try await db.select().column("user_id").from("stripe_customers").where("customer_id", .equal, customerID).first()
            .map { UserID(rawValue: try $0.decode(column: "user_id", as: UUID.self)) }
    }

    /// Links a Stripe customer to a user (a later checkout by another user moves it).
    static func linkCustomer(_ customerID: String, to user: UserID, on db: any SQLDatabase) async throws {
        try await db.insert(into: "stripe_customers").columns("customer_id", "user_id").values(SQLBind(customerID), SQLBind(user.rawValue))
            .onConflict(with: ["customer_id"]) { $0.set(excludedValueOf: "user_id") }
            .run()
    }

    /// Whether an account with this id exists.
    static func userExists(_ user: UserID, on db: any SQLDatabase) async throws -> Bool {
        try await db.select().column("id").from("users").where("id", .equal, user.rawValue).first() != nil
    }

    private static let columns = [
        "id", "user_id", "source", "external_id", "product_id", "tier", "expires_at", "is_trial", "will_renew", "grace_expires_at",
        "in_billing_retry", "revoked_at", "state_at", "environment", "customer_id", "latest_invoice", "store_status",
    ]

    private static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns(columns).from("subscriptions")
    }

    private static func record(_ row: any SQLRow) throws -> SubscriptionRecord {
        SubscriptionRecord(
            id: try row.decode(column: "id", as: UUID.self),
            user: try row.decode(column: "user_id", as: UUID?.self).map(UserID.init(rawValue:)),
            externalID: try row.decode(column: "external_id", as: String.self),
            state: SubscriptionState(
                source: EntitlementSource(rawValue: try row.decode(column: "source", as: String.self)) ?? .promotional,
                productID: try row.decode(column: "product_id", as: String.self),
                tier: SubscriptionTier(rawValue: try row.decode(column: "tier", as: String.self)) ?? .free,
                expiresAt: try row.decode(column: "expires_at", as: Date?.self),
                isTrial: try row.decode(column: "is_trial", as: Bool.self),
                willRenew: try row.decode(column: "will_renew", as: Bool.self),
                gracePeriodExpiresAt: try row.decode(column: "grace_expires_at", as: Date?.self),
                isInBillingRetry: try row.decode(column: "in_billing_retry", as: Bool.self),
                revokedAt: try row.decode(column: "revoked_at", as: Date?.self)
            ),
            stateAt: try row.decode(column: "state_at", as: Date.self),
            environment: try row.decode(column: "environment", as: String?.self),
            customerID: try row.decode(column: "customer_id", as: String?.self),
            latestInvoice: try row.decode(column: "latest_invoice", as: String?.self),
            storeStatus: try row.decode(column: "store_status", as: String?.self)
        )
    }
}

enum SubscriptionStoreError: Error {
    /// A row inserted (or found) a moment ago is gone.
    case vanished
}

/// Subscriptions in the account export and deletion. Deleting an account releases its purchases (a new account on the
/// same Apple ID may claim them again); processed-notification ids hold no user and stay.
struct SubscriptionsOwner: InMemoryAccountDataOwner {
    let section = "subscriptions"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let records = try await SubscriptionStore.records(of: user, on: db)
        return try .exportList(records) { record in
            [
                "source": record.state.source.rawValue, "productId": record.state.productID, "tier": record.state.tier.rawValue,
                "expiresAt": record.state.expiresAt?.formatted(.iso8601), "willRenew": record.state.willRenew,
                "revokedAt": record.state.revokedAt?.formatted(.iso8601),
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "stripe_customers").where("user_id", .equal, user.rawValue).run()
        try await db.delete(from: "subscriptions").where("user_id", .equal, user.rawValue).run()
    }
}

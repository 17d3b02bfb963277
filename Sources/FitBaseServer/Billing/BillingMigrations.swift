import SQLKit

/// `subscriptions`: every purchase FitBase knows of, one row per store subscription (App Store original transaction,
/// Stripe subscription, promotional grant), owned by a user once claimed; `billing_events`: the store notifications
/// already processed; `stripe_customers`: which user a Stripe customer is.
struct CreateSubscriptions: Migration {
    let name = "2026-11-22.billing.create"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "subscriptions")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("user_id", type: engine.uuid, .references("users", "id", onDelete: .cascade))
            .column("source", type: .text, .notNull)
            .column("external_id", type: .text, .notNull)
            .column("product_id", type: .text, .notNull)
            .column("tier", type: .text, .notNull)
            .column("expires_at", type: engine.instant)
            .column("is_trial", type: engine.boolean, .notNull)
            .column("will_renew", type: engine.boolean, .notNull)
            .column("grace_expires_at", type: engine.instant)
            .column("in_billing_retry", type: engine.boolean, .notNull)
            .column("revoked_at", type: engine.instant)
            .column("state_at", type: engine.instant, .notNull)  // the store's time of the state held: older news never wins
            .column("environment", type: .text)
            .column("customer_id", type: .text)
            .column("latest_invoice", type: .text)
            .column("store_status", type: .text)  // the store's own word for the state (Stripe's status), for ties
            .timestampColumns(engine)
            .unique("source", "external_id")
            .run()
        try await database.create(index: "subscriptions_user").on("subscriptions").column("user_id").run()
        try await database.create(index: "subscriptions_customer").on("subscriptions").column("customer_id").run()
        try await database.create(table: "billing_events")
            .column("source", type: .text, .notNull)
            .column("event_id", type: .text, .notNull)
            .column("type", type: .text, .notNull)
            .column("received_at", type: engine.instant, .notNull)
            .primaryKey("source", "event_id")
            .run()
        try await database.create(table: "stripe_customers")
            .column("customer_id", type: .text, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .run()
    }
}

import SQLKit

/// `analytics_events`: product analytics events (see ``AnalyticsStore``). Keyed by user and the client's event id, so
/// a batch sent again is stored once; indexed for the daily counts and for the retention purge.
struct CreateAnalyticsEvents: Migration {
    let name = "2026-11-26.analytics.create-events"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "analytics_events")
            .column("user_id", type: engine.uuid, .notNull, .references("users", "id", onDelete: .cascade))
            .column("id", type: engine.uuid, .notNull)
            .column("name", type: .text, .notNull)
            .column("occurred_at", type: engine.instant, .notNull)
            .column("day", type: .text, .notNull)  // YYYY-MM-DD, UTC
            .column("properties", type: .text, .notNull)  // JSON object
            .column("received_at", type: engine.instant, .notNull)
            .primaryKey("user_id", "id")
            .run()
        try await database.create(index: "analytics_events_day_name").on("analytics_events").column("day").column("name").run()
        try await database.create(index: "analytics_events_occurred").on("analytics_events").column("occurred_at").run()
    }
}

import SQLKit

/// `events`: what realtime subscribers are told, each with a durable, increasing id, written in the transaction of
/// its cause (an outbox). Topics are `group:<id>` (its leaderboards) and `user:<id>` (their notifications).
struct CreateEvents: Migration {
    let name = "2026-11-22.realtime.events"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "events")
            .column("id", type: engine == .postgres ? .bigint : .int, .primaryKey(autoIncrement: true))
            .column("topic", type: .text, .notNull)
            .column("type", type: .text, .notNull)
            .column("data", type: .text, .notNull)
            .column("created_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "events_topic").on("events").column("topic").column("id").run()
    }
}

import FitBaseCore
import Foundation
import SQLKit

/// The change feed's tables.
///
/// * `sync_sequences`: per user, the last sequence number handed out and the highest one whose tombstone has been
///   purged (cursors below it are too old to resume from).
/// * `sync_changes`: per record of a synced collection, its latest change: sequence number, version, the writer's
///   `updated_at`, and whether it is a tombstone. A record's row is replaced on every change, so a pull returns each
///   record once, at its latest state.
/// * `sync_mutations`: the result of every pushed mutation by its client id, so a replay returns it unchanged.
///
/// Records that exist when the migration runs are entered into the feed, so a first pull returns them.
struct CreateSyncFeed: Migration {
    let name = "2026-11-23.sync.create-feed"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "sync_sequences")
            .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false), .references("users", "id", onDelete: .cascade))
            .column("last_seq", type: .bigint, .notNull)
            .column("purged_through", type: .bigint, .notNull)
            .run()
        try await database.create(table: "sync_changes")
            .ownerColumn(engine)
            .column("collection", type: .text, .notNull)
            .column("record_id", type: .text, .notNull)
            .column("seq", type: .bigint, .notNull)
            .column("version", type: .bigint, .notNull)
            .column("deleted", type: engine.boolean, .notNull)
            .column("updated_at", type: engine.instant, .notNull)
            .column("changed_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "sync_changes_record").unique().on("sync_changes").column("user_id").column("collection").column("record_id").run()
        try await database.create(index: "sync_changes_user_seq").unique().on("sync_changes").column("user_id").column("seq").run()
        try await database.create(table: "sync_mutations")
            .ownerColumn(engine)
            .column("mutation_id", type: .text, .notNull)
            .column("result", type: .text, .notNull)  // JSON of the mutation's result as first answered
            .column("created_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "sync_mutations_id").unique().on("sync_mutations").column("user_id").column("mutation_id").run()

        // Backfill: every existing record enters the feed once, oldest first per user.
        var existing: [(user: UUID, collection: SyncCollection, id: String, version: Int, updatedAt: Date)] = []
        for row in try await database.select().columns("user_id", "id", "version", "updated_at").from("training_plans").all() {
            existing.append((
                try row.decode(column: "user_id", as: UUID.self), .plans, try row.decode(column: "id", as: UUID.self).uuidString.lowercased(),
                try row.decode(column: "version", as: Int.self), try row.decode(column: "updated_at", as: Date.self)
            ))
        }
        for row in try await database.select().columns("user_id", "id", "created_at").from("workout_logs").all() {
            existing.append((
                try row.decode(column: "user_id", as: UUID.self), .workoutLogs, try row.decode(column: "id", as: UUID.self).uuidString.lowercased(),
                1, try row.decode(column: "created_at", as: Date.self)
            ))
        }
        for row in try await database.select().columns("user_id", "id", "updated_at").from("cycle_periods").all() {
            existing.append((
                try row.decode(column: "user_id", as: UUID.self), .cycleLogs, try row.decode(column: "id", as: UUID.self).uuidString.lowercased(),
                1, try row.decode(column: "updated_at", as: Date.self)
            ))
        }
        for row in try await database.select().columns("user_id", "updated_at").from("user_profiles").all() {
            existing.append((try row.decode(column: "user_id", as: UUID.self), .preferences, SyncFeed.preferencesID, 1, try row.decode(column: "updated_at", as: Date.self)))
        }
        // The wall clock: a migration runs once, before the application (and its ServerClock) exists, and these
        // entries' change time only orders them against later writes.
        let now = Date.storageNow
        for (user, records) in Dictionary(grouping: existing, by: \.user) {
            let ordered = records.sorted { $0.updatedAt < $1.updatedAt }
            for (index, record) in ordered.enumerated() {
                try await database.insert(into: "sync_changes")
                    .columns("user_id", "collection", "record_id", "seq", "version", "deleted", "updated_at", "changed_at")
                    .values(
                        SQLBind(user), SQLBind(record.collection.rawValue), SQLBind(record.id), SQLBind(index + 1), SQLBind(record.version),
                        SQLBind(false), SQLBind(record.updatedAt), SQLBind(now)
                    )
                    .run()
            }
            try await database.insert(into: "sync_sequences").columns("user_id", "last_seq", "purged_through")
                .values(SQLBind(user), SQLBind(ordered.count), SQLBind(0)).run()
        }
    }
}

import SQLKit

/// `cycle_periods`: one row per logged period of a user.
struct CreateCyclePeriods: Migration {
    let name = "2026-11-22.cycle.create-periods"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "cycle_periods")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("start_date", type: .text, .notNull)  // YYYY-MM-DD in the user's time zone
            .column("end_date", type: .text)
            .column("flow", type: .text)
            .column("symptoms", type: .text, .notNull)  // JSON array
            .column("notes", type: .text)
            .timestampColumns(engine)
            .run()
        try await database.create(index: "cycle_periods_user_start").unique().on("cycle_periods").column("user_id").column("start_date").run()
    }
}

/// `cycle_periods` sealed: the row keeps its id, owner and times in clear; the period itself (days, flow, symptoms,
/// notes) is sealed under the owner's data key (``SealedFields``), and its first day is stored only as a blind index
/// (`start_key`), which keeps one period per first day per user without revealing the day. The clear table of earlier
/// versions is renamed `cycle_periods_unsealed` and emptied into this one as the server starts (``CycleDataSealing``).
struct SealCyclePeriods: Migration {
    let name = "2026-11-24.cycle.seal-periods"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.drop(index: "cycle_periods_user_start").run()
        try await database.raw("ALTER TABLE cycle_periods RENAME TO cycle_periods_unsealed").run()
        if engine == .postgres {
            // Index and constraint names are the schema's on PostgreSQL: the new table's must be free.
            try await database.raw("ALTER INDEX cycle_periods_pkey RENAME TO cycle_periods_unsealed_pkey").run()
            try await database.raw("ALTER TABLE cycle_periods_unsealed RENAME CONSTRAINT cycle_periods_user_id_fkey TO cycle_periods_unsealed_user_id_fkey").run()
        }
        try await database.create(table: "cycle_periods")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("start_key", type: .text, .notNull)
            .column("key_id", type: .text, .notNull)
            .column("sealed", type: engine.bytes, .notNull)
            .timestampColumns(engine)
            .run()
        try await database.create(index: "cycle_periods_user_start_key").unique().on("cycle_periods").column("user_id").column("start_key").run()
    }
}

/// `cycle_signals`: one row per fertility signal (LH test, basal or wrist temperature, cervical mucus) of a user. Like
/// periods, only the id, owner and times are in clear; the day, type and reading are sealed under the owner's data key.
struct CreateCycleSignals: Migration {
    let name = "2026-11-26.cycle.create-signals"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "cycle_signals")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("key_id", type: .text, .notNull)
            .column("sealed", type: engine.bytes, .notNull)
            .timestampColumns(engine)
            .run()
        try await database.create(index: "cycle_signals_user").on("cycle_signals").column("user_id").run()
    }
}

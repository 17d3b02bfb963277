import SQLKit

/// `workout_logs`: completed workouts, with the local day and cycle position fixed when they were logged.
struct CreateWorkoutLogs: Migration {
    let name = "2026-11-22.history.create-workout-logs"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "workout_logs")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("workout_id", type: engine.uuid, .notNull)  // no foreign key: history outlives catalog edits
            .column("workout_type", type: .text, .notNull)
            .column("workout_title", type: .text, .notNull)
            .column("completed_at", type: engine.instant, .notNull)
            .column("local_date", type: .text, .notNull)  // YYYY-MM-DD in the user's time zone when logged
            .column("duration_minutes", type: .int, .notNull)
            .column("rating", type: .int)
            .column("energy_before", type: .int)
            .column("energy_after", type: .int)
            .column("notes", type: .text)
            .column("cycle_phase", type: .text)
            .column("cycle_day", type: .int)
            .column("created_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "workout_logs_user_completed").on("workout_logs").column("user_id").column("completed_at").run()
    }
}

/// The private fields of workout logs sealed (energy before and after, notes, cycle phase and day): two columns for
/// the owner's data key id and the ciphertext. The clear columns of earlier versions stay in the table, emptied as
/// the server starts (``CycleDataSealing``) and never written again.
struct SealWorkoutLogFields: Migration {
    let name = "2026-11-24.history.seal-private-fields"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "workout_logs").column("key_id", type: .text).run()
        try await database.alter(table: "workout_logs").column("sealed", type: engine.bytes).run()
    }
}

/// The user's own history is read newest first (`completed_at DESC, id DESC`): an index in exactly that order, so a page
/// is read off the index without sorting — logs that share a time (an import) included, where an index on
/// (`user_id`, `completed_at`) left every tie to a sort. It replaces that index (whose reads it serves too).
struct IndexWorkoutLogsNewestFirst: Migration {
    let name = "2026-11-26.history.index-newest-first"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.raw(#"CREATE INDEX "workout_logs_user_newest" ON "workout_logs" ("user_id", "completed_at" DESC, "id" DESC)"#).run()
        try await database.drop(index: "workout_logs_user_completed").run()
    }
}

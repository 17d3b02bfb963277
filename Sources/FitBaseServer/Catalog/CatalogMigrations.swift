import SQLKit

/// The catalog: workouts with their list-valued attributes in side tables (so filters are indexed joins on both
/// engines), full-text search (FTS5 on SQLite, a generated `tsvector` on PostgreSQL), and programs.
struct CreateCatalog: Migration {
    let name = "2026-11-22.catalog.create"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "workouts")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("title", type: .text, .notNull)
            .column("description", type: .text, .notNull)
            .column("type", type: .text, .notNull)
            .column("duration_minutes", type: .int, .notNull)
            .column("intensity", type: .text, .notNull)
            .column("thumbnail_url", type: .text, .notNull)
            .column("video_url", type: .text, .notNull)
            .column("instructor_name", type: .text, .notNull)
            .column("tags", type: .text, .notNull)  // JSON array
            .column("is_featured", type: engine.boolean, .notNull)
            .column("is_premium", type: engine.boolean, .notNull)
            .column("benefits", type: .text, .notNull)  // JSON array
            .timestampColumns(engine)
            .run()
        for (table, column) in [("workout_phases", "phase"), ("workout_equipment", "equipment"), ("workout_target_areas", "target_area")] {
            try await database.create(table: table)
                .column("workout_id", type: engine.uuid, .notNull, .references("workouts", "id", onDelete: .cascade))
                .column(column, type: .text, .notNull)
                .primaryKey("workout_id", column)
                .run()
            try await database.create(index: "\(table)_\(column)").on(table).column(column).column("workout_id").run()
        }
        try await database.create(index: "workouts_type").on("workouts").column("type").run()

        switch engine {
        case .sqlite:
            try await database.raw(
                "CREATE VIRTUAL TABLE workouts_fts USING fts5(workout_id UNINDEXED, title, description, tags, instructor_name, tokenize = 'porter unicode61')"
            ).run()
        case .postgres:
            try await database.raw("""
                ALTER TABLE workouts ADD COLUMN search tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', tags), 'B') ||
                    to_tsvector('english', description) || to_tsvector('simple', instructor_name)
                ) STORED
                """).run()
            try await database.raw("CREATE INDEX workouts_search ON workouts USING GIN (search)").run()
        }

        try await database.create(table: "programs")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("title", type: .text, .notNull)
            .column("description", type: .text, .notNull)
            .column("level", type: .text, .notNull)
            .column("is_premium", type: engine.boolean, .notNull)
            .timestampColumns(engine)
            .run()
        try await database.create(table: "program_workouts")
            .column("program_id", type: engine.uuid, .notNull, .references("programs", "id", onDelete: .cascade))
            .column("week", type: .int, .notNull)
            .column("position", type: .int, .notNull)
            .column("workout_id", type: engine.uuid, .notNull, .references("workouts", "id"))
            .primaryKey("program_id", "week", "position")
            .run()
        try await database.create(index: "program_workouts_workout").on("program_workouts").column("workout_id").run()
    }
}

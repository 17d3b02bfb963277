import SQLKit

/// `training_plans`: a user's plans, with a version and update time per row so the sync feed can carry them as they
/// are (the weekly schedule is one JSON document, replaced whole, which is what last-writer-wins sync needs).
struct CreateTrainingPlans: Migration {
    let name = "2026-11-22.plans.create"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "training_plans")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("name", type: .text, .notNull)
            .column("notes", type: .text)
            .column("start_date", type: .text, .notNull)
            .column("end_date", type: .text)
            .column("days_per_week", type: .int, .notNull)
            .column("is_completed", type: engine.boolean, .notNull)
            .column("weekly_workouts", type: .text, .notNull)  // JSON: [{week, days: [{day, workoutIds}]}]
            .column("version", type: .bigint, .notNull)
            .timestampColumns(engine)
            .run()
        try await database.create(index: "training_plans_user").on("training_plans").column("user_id").column("updated_at").run()
    }
}

import SQLKit

/// `daily_recommendations`: the answer kept for each user's current local day, with the fingerprint of the inputs
/// it was made from (a different fingerprint or day means it is stale).
struct CreateDailyRecommendations: Migration {
    let name = "2026-11-23.recommendations.create"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "daily_recommendations")
            .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false), .references("users", "id", onDelete: .cascade))
            .column("local_date", type: .text, .notNull)
            .column("fingerprint", type: .text, .notNull)
            .column("source", type: .text, .notNull)
            .column("generation", type: .int, .notNull)
            .column("answer", type: .text, .notNull)  // JSON: KeptRecommendations.Answer
            .column("generated_at", type: engine.instant, .notNull)
            .run()
    }
}

/// `daily_recommendations.variants`: the day's answers for other inputs (another energy level), so going back to one
/// is answered from what was kept instead of asking the model again.
struct AddRecommendationVariants: Migration {
    let name = "2026-11-24.recommendations.variants"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "daily_recommendations").column("variants", type: .text).run()  // JSON: [KeptRecommendations.Variant]
    }
}

/// `daily_recommendations` sealed: a kept answer's reasons and phase guidance speak of the user's cycle, so the row
/// keeps only its owner and time in clear and the day's answers (``RecommendationStore/Stored``) are sealed under the
/// owner's data key like the rest of their cycle data. The table of earlier versions held them in clear; it is a cache
/// of one day, so it is emptied (on SQLite `secure_delete` overwrites what is removed) and dropped, and each user's
/// answer is made again on their next read.
struct SealDailyRecommendations: Migration {
    let name = "2026-11-25.recommendations.seal"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.delete(from: "daily_recommendations").run()
        try await database.drop(table: "daily_recommendations").run()
        try await database.create(table: "daily_recommendations")
            .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false), .references("users", "id", onDelete: .cascade))
            .column("key_id", type: .text, .notNull)
            .column("sealed", type: engine.bytes, .notNull)
            .column("updated_at", type: engine.instant, .notNull)
            .run()
    }
}

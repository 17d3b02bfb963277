import FitBaseCore
import Foundation
import OpenAPIRuntime
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

/// Where an answer came from.
enum RecommendationSource: String, Sendable, Codable {
    case rules, llm
}

/// A day's answer as kept: workout ids rather than workouts, so a catalog change shows on the next read.
struct KeptRecommendations: Sendable, Equatable {
    struct Answer: Sendable, Equatable, Codable {
        struct Item: Sendable, Equatable, Codable {
            var workoutId: String
            var reason: String
        }
        var items: [Item]
        var phaseGuidance: String
        var alternativeIfLowEnergy: String?
    }

    var localDate: CalendarDay
    var fingerprint: String
    var source: RecommendationSource
    /// 0 for the day's first answer, one more for each refresh.
    var generation: Int
    var answer: Answer
    var generatedAt: Date
}

/// SQL for `daily_recommendations`, one row per user.
struct RecommendationStore: Sendable {
    let database: Database

    func kept(for user: UserID) async throws -> KeptRecommendations? {
        try await database.withConnection { db in
            guard let row = try await db.select().columns("local_date", "fingerprint", "source", "generation", "answer", "generated_at")
                .from("daily_recommendations").where("user_id", .equal, user.rawValue).first()
            else { return nil }
            guard let day = CalendarDay(try row.decode(column: "local_date", as: String.self)) else { return nil }
            return KeptRecommendations(
                localDate: day, fingerprint: try row.decode(column: "fingerprint", as: String.self),
                source: RecommendationSource(rawValue: try row.decode(column: "source", as: String.self)) ?? .rules,
                generation: try row.decode(column: "generation", as: Int.self),
                answer: try row.decodeJSON(column: "answer", as: KeptRecommendations.Answer.self),
                generatedAt: try row.decode(column: "generated_at", as: Date.self)
            )
        }
    }

    /// Replaces the user's kept answer.
    func keep(_ kept: KeptRecommendations, for user: UserID) async throws {
        let answer = try jsonText(kept.answer)
        try await database.transaction { db in
            try await db.insert(into: "daily_recommendations")
                .columns("user_id", "local_date", "fingerprint", "source", "generation", "answer", "generated_at")
                .values(
                    SQLBind(user.rawValue), SQLBind(kept.localDate.description), SQLBind(kept.fingerprint), SQLBind(kept.source.rawValue),
                    SQLBind(kept.generation), SQLBind(answer), SQLBind(kept.generatedAt)
                )
                .onConflict(with: ["user_id"]) { conflict in
                    ["local_date", "fingerprint", "source", "generation", "answer", "generated_at"].reduce(conflict) { $0.set(excludedValueOf: $1) }
                }
                .run()
        }
    }
}

/// The kept answer in the account export and deletion.
struct DailyRecommendationsOwner: AccountDataOwner {
    let section = "dailyRecommendations"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let rows = try await db.select().columns("local_date", "source", "answer", "generated_at")
            .from("daily_recommendations").where("user_id", .equal, user.rawValue).all()
        let kept: [(any Sendable)?] = try rows.map { row in
            let answer = try row.decodeJSON(column: "answer", as: KeptRecommendations.Answer.self)
            return [
                "date": try row.decode(column: "local_date", as: String.self),
                "source": try row.decode(column: "source", as: String.self),
                "generatedAt": try row.decode(column: "generated_at", as: Date.self).formatted(.iso8601),
                "workoutIds": answer.items.map(\.workoutId),
                "reasons": answer.items.map(\.reason),
                "phaseGuidance": answer.phaseGuidance,
            ] as [String: (any Sendable)?]
        }
        return try OpenAPIValueContainer(unvalidatedValue: kept)
    }

    func delete(_ user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "daily_recommendations").where("user_id", .equal, user.rawValue).run()
    }
}

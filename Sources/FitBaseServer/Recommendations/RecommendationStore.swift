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

/// `daily_recommendations.variants`: the day's answers for other inputs (another energy level), so going back to one
/// is answered from what was kept instead of asking the model again.
struct AddRecommendationVariants: Migration {
    let name = "2026-11-24.recommendations.variants"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "daily_recommendations").column("variants", type: .text).run()  // JSON: [KeptRecommendations.Variant]
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

extension KeptRecommendations {
    /// How a kept answer is stored among the day's variants.
    struct Variant: Sendable, Equatable, Codable {
        var fingerprint: String
        var source: RecommendationSource
        var generation: Int
        var answer: Answer
        var generatedAt: Date
    }

    var variant: Variant { Variant(fingerprint: fingerprint, source: source, generation: generation, answer: answer, generatedAt: generatedAt) }

    init(_ variant: Variant, on day: CalendarDay) {
        self.init(
            localDate: day, fingerprint: variant.fingerprint, source: variant.source, generation: variant.generation, answer: variant.answer,
            generatedAt: variant.generatedAt
        )
    }
}

/// SQL for `daily_recommendations`, one row per user: the latest answer of the user's day and up to
/// ``RecommendationStore/maximumVariants`` answers of the same day for other inputs.
struct RecommendationStore: Sendable {
    /// How many answers for other inputs a day keeps beside the latest (the energy levels and the answer without one).
    static let maximumVariants = 3

    let database: Database

    /// The user's latest kept answer.
    func kept(for user: UserID) async throws -> KeptRecommendations? {
        try await database.withConnection { db in try await Self.row(of: user, on: db)?.latest }
    }

    /// The answer kept for `day` and exactly these inputs (`fingerprint`): the latest, or one of the day's variants.
    func kept(for user: UserID, on day: CalendarDay, fingerprint: String) async throws -> KeptRecommendations? {
        guard let row = try await database.withConnection({ db in try await Self.row(of: user, on: db) }), row.latest.localDate == day else { return nil }
        if row.latest.fingerprint == fingerprint { return row.latest }
        return row.variants.first { $0.fingerprint == fingerprint }.map { KeptRecommendations($0, on: day) }
    }

    /// Makes `kept` the user's latest answer; the one it replaces stays as a variant when it is of the same day and
    /// other inputs (the oldest variants go past ``maximumVariants``).
    func keep(_ kept: KeptRecommendations, for user: UserID) async throws {
        let answer = try jsonText(kept.answer)
        try await database.transaction { db in
            var variants: [KeptRecommendations.Variant] = []
            if let previous = try await Self.row(of: user, on: db, locking: true), previous.latest.localDate == kept.localDate {
                variants = ([previous.latest.variant] + previous.variants).filter { $0.fingerprint != kept.fingerprint }
                variants = Array(variants.prefix(Self.maximumVariants))
            }
            try await db.insert(into: "daily_recommendations")
                .columns("user_id", "local_date", "fingerprint", "source", "generation", "answer", "generated_at", "variants")
                .values(
                    SQLBind(user.rawValue), SQLBind(kept.localDate.description), SQLBind(kept.fingerprint), SQLBind(kept.source.rawValue),
                    SQLBind(kept.generation), SQLBind(answer), SQLBind(kept.generatedAt), SQLBind(try jsonText(variants))
                )
                .onConflict(with: ["user_id"]) { conflict in
                    ["local_date", "fingerprint", "source", "generation", "answer", "generated_at", "variants"].reduce(conflict) { $0.set(excludedValueOf: $1) }
                }
                .run()
        }
    }

    private static func row(of user: UserID, on db: any SQLDatabase, locking: Bool = false) async throws -> (latest: KeptRecommendations, variants: [KeptRecommendations.Variant])? {
        var query = db.select().columns("local_date", "fingerprint", "source", "generation", "answer", "generated_at", "variants")
            .from("daily_recommendations").where("user_id", .equal, user.rawValue)
        if locking { query = query.for(.update) }
        guard let row = try await query.first(), let day = CalendarDay(try row.decode(column: "local_date", as: String.self)) else { return nil }
        let latest = KeptRecommendations(
            localDate: day, fingerprint: try row.decode(column: "fingerprint", as: String.self),
            source: RecommendationSource(rawValue: try row.decode(column: "source", as: String.self)) ?? .rules,
            generation: try row.decode(column: "generation", as: Int.self),
            answer: try row.decodeJSON(column: "answer", as: KeptRecommendations.Answer.self),
            generatedAt: try row.decode(column: "generated_at", as: Date.self)
        )
        let variants = try row.decode(column: "variants", as: String?.self).map { text in
            (try? JSONDecoder().decode([KeptRecommendations.Variant].self, from: Data(text.utf8))) ?? []
        } ?? []
        return (latest, variants)
    }
}

/// The kept answer in the account export and deletion.
struct DailyRecommendationsOwner: InMemoryAccountDataOwner {
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

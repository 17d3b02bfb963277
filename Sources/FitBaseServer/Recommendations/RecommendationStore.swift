import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

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

/// SQL for `daily_recommendations`, one row per user, sealed: the latest answer of the user's day and up to
/// ``RecommendationStore/maximumVariants`` answers of the same day for other inputs.
struct RecommendationStore: Sendable {
    /// How many answers for other inputs a day keeps beside the latest (the energy levels and the answer without one).
    static let maximumVariants = 3
    static let table = "daily_recommendations"

    let database: Database
    let vault: HealthVault

    /// What a row seals: the day and its answers.
    struct Stored: Sendable, Codable {
        var localDate: String
        var latest: KeptRecommendations.Variant
        var variants: [KeptRecommendations.Variant]

        var day: CalendarDay? { CalendarDay(localDate) }
    }

    /// The user's latest kept answer.
    func kept(for user: UserID) async throws -> KeptRecommendations? {
        let vault = self.vault
        guard let stored = try await database.withConnection({ db in try await Self.stored(of: user, on: db, vault: vault) }), let day = stored.day else {
            return nil
        }
        return KeptRecommendations(stored.latest, on: day)
    }

    /// The answer kept for `day` and exactly these inputs (`fingerprint`): the latest, or one of the day's variants.
    func kept(for user: UserID, on day: CalendarDay, fingerprint: String) async throws -> KeptRecommendations? {
        let vault = self.vault
        guard let stored = try await database.withConnection({ db in try await Self.stored(of: user, on: db, vault: vault) }), stored.day == day else {
            return nil
        }
        return ([stored.latest] + stored.variants).first { $0.fingerprint == fingerprint }.map { KeptRecommendations($0, on: day) }
    }

    /// Makes `kept` the user's latest answer; the one it replaces stays as a variant when it is of the same day and
    /// other inputs (the oldest variants go past ``maximumVariants``).
    func keep(_ kept: KeptRecommendations, for user: UserID) async throws {
        // The data key first, outside the transaction: the key store may share this database's single writer.
        guard let key = try await vault.dataKey(of: user, creating: true) else { throw SealedFieldsError.noKey }
        let vault = self.vault
        try await database.transaction { db in
            var variants: [KeptRecommendations.Variant] = []
            if let previous = try await Self.stored(of: user, on: db, vault: vault, locking: true), previous.day == kept.localDate {
                variants = ([previous.latest] + previous.variants).filter { $0.fingerprint != kept.fingerprint }
                variants = Array(variants.prefix(Self.maximumVariants))
            }
            let stored = Stored(localDate: kept.localDate.description, latest: kept.variant, variants: variants)
            let sealed = try vault.seal(stored, table: Self.table, id: user.rawValue, of: user, with: key)
            try await db.insert(into: "daily_recommendations")
                .columns("user_id", "key_id", "sealed", "updated_at")
                .values(SQLBind(user.rawValue), SQLBind(sealed.keyID), SQLBind(sealed.sealed), SQLBind(kept.generatedAt))
                .onConflict(with: ["user_id"]) { conflict in
                    ["key_id", "sealed", "updated_at"].reduce(conflict) { $0.set(excludedValueOf: $1) }
                }
                .run()
        }
    }

    /// The user's row, opened; `nil` without one, or when it was sealed under a key that is no longer theirs.
    static func stored(of user: UserID, on db: any SQLDatabase, vault: HealthVault, locking: Bool = false) async throws -> Stored? {
        var query = db.select().columns("key_id", "sealed").from("daily_recommendations").where("user_id", .equal, user.rawValue)
        if locking { query = query.for(.update) }
        guard let row = try await query.first() else { return nil }
        let sealed = SealedFields(keyID: try row.decode(column: "key_id", as: String.self), sealed: try row.decode(column: "sealed", as: Data.self))
        guard let key = try await vault.dataKey(of: user, creating: false), key.id == sealed.keyID else { return nil }
        return try vault.open(Stored.self, sealed, table: table, id: user.rawValue, of: user, with: key)
    }
}

/// The kept answer in the account export and deletion.
struct DailyRecommendationsOwner: InMemoryAccountDataOwner {
    let vault: HealthVault
    let section = "dailyRecommendations"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        var kept: [(any Sendable)?] = []
        if let stored = try await RecommendationStore.stored(of: user, on: db, vault: vault) {
            let answer = stored.latest.answer
            kept.append([
                "date": stored.localDate,
                "source": stored.latest.source.rawValue,
                "generatedAt": stored.latest.generatedAt.formatted(.iso8601),
                "workoutIds": answer.items.map(\.workoutId),
                "reasons": answer.items.map(\.reason),
                "phaseGuidance": answer.phaseGuidance,
            ] as [String: (any Sendable)?])
        }
        return try OpenAPIValueContainer(unvalidatedValue: kept)
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "daily_recommendations").where("user_id", .equal, user.rawValue).run()
    }
}

extension RecommendationStore {
    /// Counts a language-model call for `user` against their daily quota and the deployment's daily budget (in the
    /// database: every instance counts alike), in one transaction; the reason it may not be made, or `nil` when it
    /// may. Only a verified account may have one (an address proven by a link, or an account a provider made).
    func modelCallRefusal(for user: UserID, callsPerDay: Int, budgetPerDay: Int, now: Date) async throws -> String? {
        let perUser = RateLimiter.Rule(name: "model-calls", limit: callsPerDay, window: 86_400)
        let budget = RateLimiter.Rule(name: "model-budget", limit: budgetPerDay, window: 86_400)
        return try await database.transaction { db in
            guard let account = try await UserStore.find(id: user, on: db), account.emailVerifiedAt != nil || account.passwordHash == nil else {
                return "the account's address is not verified"
            }
            if try await RateLimiter.hit(user.description, perUser, now: now, on: db) != nil { return "the account's daily quota is spent" }
            if try await RateLimiter.hit("deployment", budget, now: now, on: db) != nil { return "the deployment's daily budget is spent" }
            return nil
        }
    }
}

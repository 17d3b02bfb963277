import FitBaseCore
import Foundation
import HTTPTypes
import SQLKit

/// Fixed-window counters in the database, shared by every instance: each hit is counted atomically (one upsert), so
/// concurrent requests cannot all slip under a limit the way a read-then-write count can.
struct RateLimiter: Sendable {
    /// A limit: at most `limit` hits per `window` for one subject of this kind.
    struct Rule: Sendable {
        /// Prefix of the subject key, e.g. `signin-email`.
        let name: String
        let limit: Int
        let window: TimeInterval
    }

    /// Counts one hit for `subject` under `rule`; returns the seconds until the window ends when the hit is over the
    /// limit, `nil` when it is allowed. The hit is counted either way.
    static func hit(_ subject: String, _ rule: Rule, now: Date, on db: any SQLDatabase) async throws -> Int? {
        let key = Self.key(subject, rule)
        let row = try await db.raw("""
            INSERT INTO rate_limits (subject, window_start, count) VALUES (\(bind: key), \(bind: now), 1)
            ON CONFLICT (subject) DO UPDATE SET
              count = CASE WHEN rate_limits.window_start <= \(bind: now.addingTimeInterval(-rule.window)) THEN 1 ELSE rate_limits.count + 1 END,
              window_start = CASE WHEN rate_limits.window_start <= \(bind: now.addingTimeInterval(-rule.window)) THEN \(bind: now) ELSE rate_limits.window_start END
            RETURNING count, window_start
            """).first()
        guard let row else { return nil }
        let count = try row.decode(column: "count", as: Int.self)
        guard count > rule.limit else { return nil }
        let start = try row.decode(column: "window_start", as: Date.self)
        return max(1, Int(start.addingTimeInterval(rule.window).timeIntervalSince(now).rounded(.up)))
    }

    /// Takes one hit back (a sign-in that turned out to be right does not count against its client address).
    static func undo(_ subject: String, _ rule: Rule, on db: any SQLDatabase) async throws {
        try await db.update("rate_limits").set(SQLIdentifier("count"), to: SQLRaw("count - 1"))
            .where("subject", .equal, key(subject, rule)).where("count", .greaterThan, 0).run()
    }

    /// Forgets every hit of `subject` (the owner signed in, or reset the password).
    static func reset(_ subject: String, _ rule: Rule, on db: any SQLDatabase) async throws {
        try await db.delete(from: "rate_limits").where("subject", .equal, key(subject, rule)).run()
    }

    /// Drops counters whose window ended more than a day ago.
    static func purge(before cutoff: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "rate_limits").where("window_start", .lessThan, cutoff).run()
    }

    /// Subjects are stored hashed: the table never holds an e-mail or client address in clear.
    private static func key(_ subject: String, _ rule: Rule) -> String {
        "\(rule.name):\(sha256Hex(subject))"
    }
}

extension Problem {
    /// 429 with `Retry-After`, e.g. `too_many_attempts`.
    static func tooManyRequests(_ code: ProblemCode, retryAfter: Int, _ detail: String) -> Problem {
        Problem(.tooManyRequests, code: code, detail: detail, headers: [.retryAfter: String(retryAfter)])
    }
}

/// Purges what accounts keep only for a while: rate-limit counters a day after their window, link tokens a day after
/// they expire, provider token nonces once their tokens expired, trusted devices once expired, the outbox's delivered and failed jobs (e-mail and pushes alike), and the
/// record of reminders sent.
enum AccountsRetention {
    static func purge(now: Date, database: Database) async throws {
        try await database.transaction { db in
            try await RateLimiter.purge(before: now.addingTimeInterval(-24 * 3600), on: db)
            try await AccountTokens.purge(expiredBefore: now.addingTimeInterval(-24 * 3600), on: db)
            try await IdentityTokenNonces.purge(now: now, on: db)
            try await db.delete(from: "trusted_devices").where("expires_at", .lessThan, now).run()
            try await OutboxWorker.purge(now: now, on: db)
            try await ReminderScheduler.purge(now: now, on: db)
        }
    }
}

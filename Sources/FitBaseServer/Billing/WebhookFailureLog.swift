import FitBaseCore
import Foundation
import HTTPTypes
import SQLKit

/// App Store and Stripe notifications that were refused or failed (a bad signature, an unknown product, the database
/// away), so the operator sees them on the console's Deliveries page and dashboard. A notification that was processed
/// is in `billing_events`; one that failed is here with its status and the problem's detail — never its body.
///
/// Anyone can post to a webhook URL, so the log keeps only the newest ``capacity`` entries: one recorded failure in
/// ``trimEvery`` (at random) trims it back, so a flood of bad notifications costs an insert each, not a sort of the
/// table each.
enum WebhookFailureLog {
    static let capacity = 1_000
    static let trimEvery: UInt64 = 32

    struct Failure: Sendable {
        let source: String
        let receivedAt: Date
        let status: Int
        let detail: String
    }

    /// Runs `receive` (one notification's handling); a failure is recorded, in a transaction of its own, and rethrown.
    static func recording<Outcome: Sendable>(
        _ source: EntitlementSource, in database: Database, now: Date, _ receive: () async throws -> Outcome
    ) async throws -> Outcome {
        do {
            return try await receive()
        } catch {
            let problem = ProblemMapping.problem(for: error) ?? .internalError
            let trims = UInt64.random(in: 0..<trimEvery) == 0
            try? await database.transaction { db in
                try await db.insert(into: "webhook_failures").columns("id", "source", "received_at", "status", "detail")
                    .values(SQLBind(UUID.random()), SQLBind(source.rawValue), SQLBind(now), SQLBind(problem.status.code), SQLBind(problem.detail ?? problem.title))
                    .run()
                if trims { try await trim(on: db) }
            }
            throw error
        }
    }

    /// Deletes all but the newest ``capacity`` entries (those older than the entry just past them, found on the index).
    static func trim(on db: any SQLDatabase) async throws {
        try await db.raw("""
            DELETE FROM webhook_failures WHERE received_at < (
                SELECT received_at FROM webhook_failures ORDER BY received_at DESC LIMIT 1 OFFSET \(literal: capacity - 1)
            )
            """).run()
    }

    static func recent(limit: Int, in database: Database) async throws -> [Failure] {
        try await database.withConnection { db in
            try await db.select().columns("source", "received_at", "status", "detail").from("webhook_failures")
                .orderBy("received_at", .descending).limit(limit).all().map { row in
                    Failure(
                        source: try row.decode(column: "source", as: String.self), receivedAt: try row.decode(column: "received_at", as: Date.self),
                        status: try row.decode(column: "status", as: Int.self), detail: try row.decode(column: "detail", as: String.self)
                    )
                }
        }
    }

    /// Failures per UTC day since `since`.
    static func count(since: Date, in database: Database) async throws -> [Date] {
        try await database.withConnection { db in
            try await db.select().column("received_at").from("webhook_failures").where("received_at", .greaterThanOrEqual, since).all()
                .map { try $0.decode(column: "received_at", as: Date.self) }
        }
    }
}

/// `webhook_failures`: the App Store and Stripe notifications that failed (``WebhookFailureLog``).
struct CreateWebhookFailures: Migration {
    let name = "2026-11-26.billing.create-webhook-failures"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "webhook_failures")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("source", type: .text, .notNull)
            .column("received_at", type: engine.instant, .notNull)
            .column("status", type: .int, .notNull)
            .column("detail", type: .text, .notNull)
            .run()
        try await database.create(index: "webhook_failures_received").on("webhook_failures").column("received_at").run()
    }
}

import HTTPTypes
import FitBaseCore
import Foundation
import Logging
import SQLKit
import ServiceLifecycle

/// Delivers the outbox: woken after each commit that queued something, and every few seconds for retries and for
/// jobs queued by other instances.
///
/// A job is claimed with a lease in one statement (`FOR UPDATE SKIP LOCKED` on PostgreSQL, the single writer on
/// SQLite), so however many instances run this, each job goes to one of them. Temporary failures (SMTP down, Apple
/// answering 5xx) retry with exponential backoff and jitter, from 10 seconds up to an hour, for about a day and a
/// half before the job is marked failed; permanent failures are marked failed at once. Every failure is logged.
struct OutboxWorker: Service {
    static let batchSize = 10
    static let lease: TimeInterval = 5 * 60
    static let maximumAttempts = 40
    /// Sent jobs are kept a week (a developer without SMTP finds their links there), failed ones a month.
    static let sentRetention: TimeInterval = 7 * 24 * 3600
    static let failedRetention: TimeInterval = 30 * 24 * 3600

    let database: Database
    let outbox: Outbox
    let mailer: any Mailer
    /// `From:` of every e-mail.
    let sender: String
    /// Apple's token endpoint; `nil` when Sign in with Apple has no key configured (nothing is queued for it then).
    let appleTokens: (any AppleTokenClient)?
    let logger: Logger
    /// The media store; `nil` in tests that deliver only e-mail (a media job fails for good then).
    var media: (any MediaStorage)? = nil
    var clock = ServerClock.system
    var pollInterval: Duration = .seconds(5)

    func run() async throws {
        await outbox.signal.runDeliveryLoop(pollInterval: pollInterval, batchSize: Self.batchSize, logger: logger, label: "outbox") {
            try await deliverDueJobs()
        }
    }

    /// Claims and delivers up to one batch of due jobs; returns how many it claimed.
    @discardableResult
    func deliverDueJobs(now: Date? = nil) async throws -> Int {
        let now = now ?? clock.now
        let leaseEnd = now.addingTimeInterval(Self.lease)
        let claimed = try await Outbox.claimDueJobs(of: .others, now: now, until: leaseEnd, limit: Self.batchSize, in: database) { $0 }
        for row in claimed {
            let id = try row.decode(column: "id", as: UUID.self)
            let attempts = try row.decode(column: "attempts", as: Int.self)
            let outcome: DeliveryOutcome
            do {
                outcome = try await deliver(outbox.open(try row.decode(column: "payload", as: Data.self), id: id))
            } catch {
                outcome = .permanent("cannot open the queued job: \(error)")
            }
            try await settle(id, outcome: outcome, attempts: attempts, lease: leaseEnd, kind: try row.decode(column: "kind", as: String.self))
        }
        return claimed.count
    }

    private enum DeliveryOutcome {
        case delivered
        case transient(String)
        case permanent(String)
    }

    private func deliver(_ job: OutboxJob) async -> DeliveryOutcome {
        switch job {
        case .email(let message):
            do {
                try await mailer.send(message, from: sender)
                return .delivered
            } catch .transient(let reason) {
                return .transient(reason)
            } catch {
                return .permanent(error.description)
            }
        case .appleTokenRevocation(let refreshToken, let clientID):
            guard let appleTokens else { return .permanent("Sign in with Apple has no key configured (FITBASE_APPLE_KEY_ID)") }
            do {
                try await appleTokens.revoke(refreshToken: refreshToken, clientID: clientID)
                return .delivered
            } catch let error as AppleTokenError where error.isPermanent {
                return .permanent(error.description)
            } catch {
                return .transient(String(describing: error))
            }
        case .mediaDeletion(let prefix, let workout):
            guard let media else { return .permanent("no media store to delete \(prefix) from") }
            do {
                if let workout, try await database.withConnection({ db in try await CatalogStore.contains(workout, on: db) }) {
                    logger.notice("outbox: a deleted workout is in the catalog again; its media stay", metadata: ["workout": "\(workout)"])
                    return .delivered
                }
                try await media.deleteAll(prefix: prefix)
                return .delivered
            } catch {
                return .transient(String(describing: error))
            }
        }
    }

    private func settle(_ id: UUID, outcome: DeliveryOutcome, attempts: Int, lease: Date, kind: String) async throws {
        let now = clock.now
        try await database.transaction { db in
            var update = db.update("outbox").set("claimed_until", to: SQLLiteral.null)
            switch outcome {
            case .delivered:
                update = update.set("status", to: OutboxStatus.sent.rawValue).set("completed_at", to: now).set("last_error", to: SQLLiteral.null)
            case .transient(let reason) where attempts < Self.maximumAttempts:
                update = update.set("next_attempt_at", to: now.addingTimeInterval(Self.backoff(afterAttempt: attempts))).set("last_error", to: reason)
            case .transient(let reason), .permanent(let reason):
                update = update.set("status", to: OutboxStatus.failed.rawValue).set("completed_at", to: now).set("last_error", to: reason)
            }
            try await update.where("id", .equal, id).where("claimed_until", .equal, lease).run()
        }
        switch outcome {
        case .delivered:
            logger.debug("outbox: delivered", metadata: ["job": "\(id)", "kind": "\(kind)"])
        case .transient(let reason) where attempts < Self.maximumAttempts:
            logger.warning("outbox: delivery failed, will retry", metadata: ["job": "\(id)", "kind": "\(kind)", "attempt": "\(attempts)", "error": "\(reason)"])
        case .transient(let reason), .permanent(let reason):
            logger.error("outbox: delivery failed for good", metadata: ["job": "\(id)", "kind": "\(kind)", "attempts": "\(attempts)", "error": "\(reason)"])
        }
    }

    /// 10 s, 20 s, 40 s, … capped at an hour, each ±20 % so instances retrying together spread out.
    static func backoff(afterAttempt attempt: Int) -> TimeInterval {
        let base = min(3600, 10 * pow(2, Double(min(attempt - 1, 20))))
        return base * Double.random(in: 0.8...1.2)
    }

    /// Forgets delivered jobs after a week and failed ones after a month (the retention service calls it).
    static func purge(now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "outbox").where("status", .equal, OutboxStatus.sent.rawValue)
            .where("completed_at", .lessThan, now.addingTimeInterval(-sentRetention)).run()
        try await db.delete(from: "outbox").where("status", .equal, OutboxStatus.failed.rawValue)
            .where("completed_at", .lessThan, now.addingTimeInterval(-failedRetention)).run()
    }
}

/// With no SMTP server configured (the embedded default), e-mail is written to the log at `info` — links included,
/// so a developer can click them — and counts as delivered.
struct LogMailer: Mailer {
    let logger: Logger

    func send(_ message: MailMessage, from: String) async throws(MailDeliveryError) {
        logger.info(
            "e-mail (no SMTP server configured: FITBASE_SMTP_URL)",
            metadata: ["to": "\(message.to)", "from": "\(from)", "subject": "\(message.subject)", "body": "\(message.text)"]
        )
    }
}

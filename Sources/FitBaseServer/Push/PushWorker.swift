import FitBaseCore
import Foundation
import Logging
import SQLKit
import ServiceLifecycle

/// Sends the outbox's push jobs, apart from the e-mail worker (``OutboxWorker`` never claims kind `push`), so a
/// `week_ended` to a large group neither waits behind e-mail nor holds it up.
///
/// Jobs are claimed in batches of ``batchSize`` with a lease, in one statement (`FOR UPDATE SKIP LOCKED` on
/// PostgreSQL, the single writer on SQLite), so however many instances run this each job goes to one of them; a
/// batch is sent with up to ``concurrency`` pushes in flight (APNs multiplexes them over HTTP/2) and settled in one
/// transaction. Outcomes: delivered → `sent`; device gone → the device is removed (unless registered again since
/// Apple learned the token was dead) and the job finishes; retry → backoff as e-mail (10 s doubling to an hour, or
/// Apple's hint when longer), `failed` after ``OutboxWorker/maximumAttempts``; rejected → `failed`, logged as an
/// error.
package struct PushWorker: Service {
    static let batchSize = 500
    static let concurrency = 200

    let database: Database
    let provider: any PushProvider
    let logger: Logger
    var clock: ServerClock
    var pollInterval: Duration = .seconds(2)

    package init(database: Database, provider: any PushProvider, logger: Logger, clock: ServerClock = .system, pollInterval: Duration = .seconds(2)) {
        self.database = database
        self.provider = provider
        self.logger = logger
        self.clock = clock
        self.pollInterval = pollInterval
    }

    package func run() async throws {
        await database.pushWake.runDeliveryLoop(pollInterval: pollInterval, batchSize: Self.batchSize, logger: logger, label: "push") {
            try await deliverDueJobs()
        }
    }

    /// One claimed job.
    private struct Claimed: Sendable {
        var id: UUID
        var attempts: Int
        var message: PushMessage?
    }

    /// Claims, sends and settles up to one batch of due push jobs; returns how many it claimed.
    @discardableResult
    package func deliverDueJobs(now: Date? = nil) async throws -> Int {
        let now = now ?? clock.now
        let leaseEnd = now.addingTimeInterval(OutboxWorker.lease)
        let claimed = try await Outbox.claimDueJobs(of: .push, now: now, until: leaseEnd, limit: Self.batchSize, in: database) { row in
            Claimed(
                id: try row.decode(column: "id", as: UUID.self), attempts: try row.decode(column: "attempts", as: Int.self),
                message: try? JSONDecoder().decode(PushMessage.self, from: try row.decode(column: "payload", as: Data.self))
            )
        }
        guard !claimed.isEmpty else { return 0 }
        let outcomes = await send(claimed)
        try await settle(outcomes, lease: leaseEnd)
        return claimed.count
    }

    /// Sends every claimed push, at most ``concurrency`` at a time.
    private func send(_ jobs: [Claimed]) async -> [(Claimed, PushOutcome)] {
        let provider = self.provider
        return await withTaskGroup(of: (Claimed, PushOutcome).self) { group in
            var results: [(Claimed, PushOutcome)] = []
            results.reserveCapacity(jobs.count)
            var next = 0
            while next < min(Self.concurrency, jobs.count) {
                let job = jobs[next]
                group.addTask { await Self.send(job, via: provider) }
                next += 1
            }
            while let result = await group.next() {
                results.append(result)
                if next < jobs.count {
                    let job = jobs[next]
                    group.addTask { await Self.send(job, via: provider) }
                    next += 1
                }
            }
            return results
        }
    }

    private static func send(_ job: Claimed, via provider: any PushProvider) async -> (Claimed, PushOutcome) {
        guard let message = job.message else { return (job, .rejected(reason: "the queued push cannot be read")) }
        return (job, await provider.send(message))
    }

    /// Writes every outcome of a batch in one transaction: one statement for all the sent, one per other outcome.
    private func settle(_ outcomes: [(Claimed, PushOutcome)], lease: Date) async throws {
        let now = clock.now
        let logger = self.logger
        try await database.transaction { db in
            var sent: [UUID] = []
            for (job, outcome) in outcomes {
                let update = db.update("outbox").set("claimed_until", to: SQLLiteral.null)
                switch outcome {
                case .delivered:
                    sent.append(job.id)
                    continue
                case .deviceGone(let reason, let since):
                    if let token = job.message?.deviceToken {
                        try await DeviceStore.gone(token, since: since ?? now, on: db)
                    }
                    try await Self.finish(update, status: .failed, reason: "device gone: \(reason)", now: now)
                        .where("id", .equal, job.id).where("claimed_until", .equal, lease).run()
                    logger.info("push: device gone", metadata: ["job": "\(job.id)", "reason": "\(reason)"])
                case .retry(let reason, let after) where job.attempts < OutboxWorker.maximumAttempts:
                    let delay = max(OutboxWorker.backoff(afterAttempt: job.attempts), after.map(Self.seconds) ?? 0)
                    try await update.set("next_attempt_at", to: now.addingTimeInterval(delay)).set("last_error", to: reason)
                        .where("id", .equal, job.id).where("claimed_until", .equal, lease).run()
                    logger.warning("push: will retry", metadata: ["job": "\(job.id)", "attempt": "\(job.attempts)", "error": "\(reason)"])
                case .retry(let reason, _), .rejected(let reason):
                    try await Self.finish(update, status: .failed, reason: reason, now: now)
                        .where("id", .equal, job.id).where("claimed_until", .equal, lease).run()
                    logger.error("push: failed for good", metadata: ["job": "\(job.id)", "attempts": "\(job.attempts)", "error": "\(reason)"])
                }
            }
            for chunk in stride(from: 0, to: sent.count, by: Self.batchSize).map({ Array(sent[$0..<min($0 + Self.batchSize, sent.count)]) }) {
                try await Self.finish(db.update("outbox").set("claimed_until", to: SQLLiteral.null), status: .sent, reason: nil, now: now)
                    .where("id", .in, chunk).where("claimed_until", .equal, lease).run()
            }
        }
    }

    /// Marks a job done and blanks its body (the lock-screen text and token need not outlive the sending).
    private static func finish(_ update: SQLUpdateBuilder, status: OutboxStatus, reason: String?, now: Date) -> SQLUpdateBuilder {
        update.set("status", to: status.rawValue).set("completed_at", to: now).set("last_error", to: reason).set("payload", to: Data())
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        TimeInterval(duration.components.seconds) + TimeInterval(duration.components.attoseconds) / 1e18
    }
}

import FitBaseCore
import Foundation
import Logging
import OpenAPIRuntime
import SQLKit
import ServiceLifecycle
import Synchronization

/// Something that must leave the process once the change causing it has committed.
enum OutboxJob: Codable, Sendable, Equatable {
    /// An e-mail, rendered when it was queued.
    case email(MailMessage)
    /// Revoking a Sign in with Apple refresh token at Apple (the account was deleted).
    case appleTokenRevocation(refreshToken: String, clientID: String)
    /// Deleting every stored object under a prefix (a deleted workout's media), retried until the store has done it;
    /// not done at all if the workout `of` is in the catalog again by then (re-created under its id: the files under
    /// the prefix may be its new ones).
    case mediaDeletion(prefix: String, of: WorkoutID?)

    var kind: String {
        switch self {
        case .email: "email"
        case .appleTokenRevocation: "apple-token-revocation"
        case .mediaDeletion: "media-deletion"
        }
    }
}

/// The durable outbox: jobs are written in the transaction of the change that causes them (so a rolled-back change
/// sends nothing and a committed one is never lost), sealed under the master key, and delivered by ``OutboxWorker``
/// on any instance, each claimed by exactly one.
struct Outbox: Sendable {
    let masterKey: MasterKey
    /// Wakes this instance's worker after a commit that queued something.
    let signal: WakeSignal

    /// Queues `job` in the caller's transaction; the worker is woken once the transaction commits.
    func enqueue(_ job: OutboxJob, user: UserID?, now: Date, on db: any SQLDatabase) async throws {
        let id = UUID.random()
        let sealed = try masterKey.seal(try JSONEncoder().encode(job), context: Self.context(id))
        try await db.insert(into: "outbox")
            .columns("id", "kind", "user_id", "payload", "status", "attempts", "next_attempt_at", "created_at")
            .values(
                SQLBind(id), SQLBind(job.kind), SQLBind(user?.rawValue), SQLBind(sealed), SQLBind(OutboxStatus.pending.rawValue),
                SQLBind(0), SQLBind(now), SQLBind(now)
            )
            .run()
        let signal = self.signal
        TransactionHooks.current?.afterCommit(key: "outbox.wake") { signal.wake() }
    }

    func open(_ sealed: Data, id: UUID) throws -> OutboxJob {
        try JSONDecoder().decode(OutboxJob.self, from: try masterKey.open(sealed, context: Self.context(id)))
    }

    /// What a job's ciphertext is bound to: its row.
    static func context(_ id: UUID) -> String {
        "outbox/\(id.uuidString.lowercased())"
    }
}

/// The jobs one worker delivers: the push jobs (``PushWorker``) or all the others (``OutboxWorker``).
enum OutboxLane: Sendable {
    case push, others
}

extension Outbox {
    /// Claims up to `limit` of `lane`'s due pending jobs until `leaseEnd`, counting an attempt on each, in one statement
    /// (`FOR UPDATE SKIP LOCKED` on PostgreSQL, the single writer on SQLite), so however many instances claim, each job
    /// goes to one of them. `read` turns each claimed row (`id`, `kind`, `payload`, `attempts`) into a job inside the
    /// claiming transaction.
    static func claimDueJobs<Job: Sendable>(
        of lane: OutboxLane, now: Date, until leaseEnd: Date, limit: Int, in database: Database, read: @escaping @Sendable (any SQLRow) throws -> Job
    ) async throws -> [Job] {
        let lockClause = database.engine == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let kindTest = lane == .push ? "=" : "<>"
        return try await database.transaction { db in
            try await db.raw("""
                UPDATE outbox SET claimed_until = \(bind: leaseEnd), attempts = attempts + 1
                WHERE id IN (
                  SELECT id FROM outbox
                  WHERE kind \(unsafeRaw: kindTest) \(bind: PushQueue.kind) AND status = 'pending' AND next_attempt_at <= \(bind: now)
                    AND (claimed_until IS NULL OR claimed_until < \(bind: now))
                  ORDER BY next_attempt_at LIMIT \(literal: limit)\(unsafeRaw: lockClause)
                )
                RETURNING id, kind, payload, attempts
                """).all().map(read)
        }
    }
}

enum OutboxStatus: String, Sendable {
    case pending, sent, failed
}

/// A wake-up call between threads that never loses one: a `wake()` with nobody waiting is kept for the next `wait()`.
final class WakeSignal: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    init() {}

    func wake() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the next `wake()` (at once if one came since the last wait), or after `timeout`.
    func wait(timeout: Duration) async {
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.wake()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
    }
}

extension WakeSignal {
    /// The loop of an outbox worker (e-mail, pushes), until the service shuts down: waits for a wake-up (a commit that
    /// queued something) or `pollInterval` (retries, jobs queued by other instances), then delivers batches until one
    /// comes back short of `batchSize`. Waits first: services start while migrations run. A failed round is logged
    /// and tried again at the next wake-up.
    func runDeliveryLoop(pollInterval: Duration, batchSize: Int, logger: Logger, label: String, deliverBatch: () async throws -> Int) async {
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                await wait(timeout: pollInterval)
                guard !Task.isShuttingDownGracefully && !Task.isCancelled else { return }
                do {
                    while try await deliverBatch() == batchSize {}
                } catch {
                    logger.error("\(label): delivery round failed", metadata: ["error": "\(String(reflecting: error))"])
                }
            }
        } onGracefulShutdown: {
            self.wake()
        }
    }
}

/// The user's e-mail in the outbox: exported as what was sent when (never the content: it held links), and deleted
/// with the account. Queued Apple token revocations are not the user's data and outlive the account on purpose.
struct OutboxOwner: InMemoryAccountDataOwner {
    let section = "emails"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let rows = try await db.select().columns("status", "created_at", "completed_at").from("outbox")
            .where("user_id", .equal, user.rawValue).where("kind", .equal, "email").orderBy("created_at").all()
        return try .exportList(rows) { row in
            [
                "status": try row.decode(column: "status", as: String.self),
                "queuedAt": try row.decode(column: "created_at", as: Date.self).formatted(.iso8601),
                "completedAt": try row.decode(column: "completed_at", as: Date?.self)?.formatted(.iso8601),
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "outbox").where("user_id", .equal, user.rawValue).where("kind", .equal, "email").run()
    }
}

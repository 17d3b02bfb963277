import Foundation
import SQLKit
import Synchronization

/// Work a transaction does once, just before it commits, however many times its body asked for it: e.g. one sync
/// nudge per user for a push of 500 changes, and its audit entries; and work that must wait until the commit is
/// durable (waking the outbox worker). ``Database/transaction(_:)`` installs one per transaction.
///
/// On SQLite a transaction shares its commit with its group (``GroupCommit``), on PostgreSQL with one user's
/// concurrent transactions (``KeyedCommitGroups``): what it asks to run before the commit
/// runs once every member of the group has run, with what the other members asked for (``adopt(into:)``), so a
/// dozen logged workouts of one user make one nudge and one run of audit entries. What it asks to run after the
/// commit stays its own.
final class TransactionHooks: Sendable {
    private let hooks = Mutex<[(key: String, run: @Sendable (any SQLDatabase) async throws -> Void)]>([])
    private let audits = Mutex<[AuditEvent]>([])
    private let committed = Mutex<[(key: String, run: @Sendable () -> Void)]>([])
    private let values = Mutex<[String: any Sendable]>([:])
    /// The cache generations of the database the transaction runs on.
    let generations: CacheGenerations?
    /// The event streams of this instance, woken once the transaction has committed events.
    let eventHub: EventHub?
    /// This instance's push worker, woken once the transaction has committed pushes.
    let pushWake: WakeSignal?

    /// The engine of the database the transaction runs on.
    let engine: DatabaseEngine

    init(engine: DatabaseEngine, generations: CacheGenerations?, eventHub: EventHub? = nil, pushWake: WakeSignal? = nil) {
        self.engine = engine
        self.generations = generations
        self.eventHub = eventHub
        self.pushWake = pushWake
    }

    /// The hooks of the transaction the current task is in (`nil` outside a transaction).
    @TaskLocal static var current: TransactionHooks?

    /// The transaction's value under `key`, made by `make` the first time it is asked for (state that several writes
    /// of one transaction share, e.g. the highest feed number it took).
    func value<Value: Sendable>(_ key: String, _ make: () -> Value) -> Value {
        values.withLock { values in
            if let existing = values[key] as? Value { return existing }
            let value = make()
            values[key] = value
            return value
        }
    }

    /// Runs `hook` just before the commit, once per `key`: a later `hook` for the same key (asked for later in this
    /// transaction, or by a later member of its commit group) replaces an earlier one, so it must cover what the
    /// earlier did (a nudge with the latest position).
    func beforeCommit(key: String, _ hook: @escaping @Sendable (any SQLDatabase) async throws -> Void) {
        hooks.withLock { hooks in Self.add((key, hook), to: &hooks) }
    }

    /// Appends `event` (its time set) to the audit log just before the commit (``AuditLog/appendAtCommit(_:now:on:engine:)``).
    func audit(_ event: AuditEvent) {
        audits.withLock { $0.append(event) }
    }

    /// Hands what this transaction asked to run before the commit to `group`, the hooks of the commit it shares,
    /// once its work is kept; after-commit work stays here, run by the transaction's own task.
    func adopt(into group: TransactionHooks) {
        let (before, events) = (hooks.withLock { $0 }, audits.withLock { $0 })
        group.hooks.withLock { hooks in
            for hook in before { Self.add(hook, to: &hooks) }
        }
        if !events.isEmpty { group.audits.withLock { $0 += events } }
    }

    private static func add(
        _ hook: (key: String, run: @Sendable (any SQLDatabase) async throws -> Void), to hooks: inout [(key: String, run: @Sendable (any SQLDatabase) async throws -> Void)]
    ) {
        if let index = hooks.firstIndex(where: { $0.key == hook.key }) { hooks[index] = hook } else { hooks.append(hook) }
    }

    /// Runs `hook` once the transaction has committed (never when it rolls back), once per `key`. It must not fail
    /// or block: it is for nudging others (e.g. waking a worker), not for more work on the data.
    func afterCommit(key: String, _ hook: @escaping @Sendable () -> Void) {
        committed.withLock { hooks in
            if !hooks.contains(where: { $0.key == key }) { hooks.append((key, hook)) }
        }
    }

    /// Runs the work asked for before the commit: the audit entries (all of a chain's in one run), then the hooks, then
    /// any entry a hook asked for.
    func run(on db: any SQLDatabase) async throws {
        try await appendAudits(on: db)
        for hook in hooks.withLock({ $0 }) { try await hook.run(db) }
        try await appendAudits(on: db)
    }

    /// Appends the entries kept for the commit (``AuditLog/appendAtCommit(_:now:on:engine:)``): a chain's entries of
    /// a whole commit group in one run.
    private func appendAudits(on db: any SQLDatabase) async throws {
        let events = audits.withLock { events in
            defer { events = [] }
            return events
        }
        if !events.isEmpty { try await AuditLog.append(all: events, now: .storageNow, on: db, engine: engine) }
    }

    func runAfterCommit() {
        for hook in committed.withLock({ $0 }) { hook.run() }
    }
}

import Foundation
import SQLKit
import Synchronization

/// Work a transaction does once, just before it commits, however many times its body asked for it: e.g. one sync
/// nudge per user for a push of 500 changes; and work that must wait until the commit is durable (waking the outbox
/// worker). ``Database/transaction(_:)`` installs one per transaction.
final class TransactionHooks: Sendable {
    private let hooks = Mutex<[(key: String, run: @Sendable (any SQLDatabase) async throws -> Void)]>([])
    private let committed = Mutex<[(key: String, run: @Sendable () -> Void)]>([])
    private let values = Mutex<[String: any Sendable]>([:])
    /// The cache generations of the database the transaction runs on.
    let generations: CacheGenerations?
    /// The event streams of this instance, woken once the transaction has committed events.
    let eventHub: EventHub?
    /// This instance's push worker, woken once the transaction has committed pushes.
    let pushWake: WakeSignal?

    init(generations: CacheGenerations?, eventHub: EventHub? = nil, pushWake: WakeSignal? = nil) {
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

    /// Runs `hook` before commit, once per `key`.
    func beforeCommit(key: String, _ hook: @escaping @Sendable (any SQLDatabase) async throws -> Void) {
        hooks.withLock { hooks in
            if !hooks.contains(where: { $0.key == key }) { hooks.append((key, hook)) }
        }
    }

    /// Runs `hook` once the transaction has committed (never when it rolls back), once per `key`. It must not fail
    /// or block: it is for nudging others (e.g. waking a worker), not for more work on the data.
    func afterCommit(key: String, _ hook: @escaping @Sendable () -> Void) {
        committed.withLock { hooks in
            if !hooks.contains(where: { $0.key == key }) { hooks.append((key, hook)) }
        }
    }

    func run(on db: any SQLDatabase) async throws {
        for hook in hooks.withLock({ $0 }) { try await hook.run(db) }
    }

    func runAfterCommit() {
        for hook in committed.withLock({ $0 }) { hook.run() }
    }
}

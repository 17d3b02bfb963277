import Foundation
import SQLKit
import Synchronization

/// PostgreSQL write transactions of one key (a user) committed in groups: one transaction, one commit, for the
/// transactions of that key that queued up while the one before ran.
///
/// One user's writes take the same rows (the user's feed sequence, their audit chain's head), which PostgreSQL locks
/// from the first write to the commit, so concurrent writes of one user would wait for each other's commit, a disk
/// flush each, one after another: an app replaying its offline queue, or a user with several devices, wrote at the
/// pace of the disk. Here they wait in this instance instead, without a connection, behind the key's gate; the
/// transaction that holds the gate runs its own body, then the queued ones itself, one after another on its connection,
/// each a savepoint (rolled back to when it throws, so a failure undoes its own writes alone), then commits once for
/// all. Every member returns once that commit succeeded (and fails if it did not), with its after-commit hooks run
/// then. Different keys never wait for each other here; instances still order one user's writes by PostgreSQL's row
/// locks, as before.
///
/// SQLite's single writer groups every transaction already (``GroupCommit``); there a keyed transaction is a plain one.
final class KeyedCommitGroups: Sendable {
    private struct Entry {
        let gate: WriteGate
        var users: Int
    }

    private let gates = Mutex<[UUID: Entry]>([:])
    private let ended = Mutex(0)

    /// The key whose group the current task runs a transaction of: a transaction for the same key inside it is not
    /// grouped (it would wait for the group it runs in).
    @TaskLocal static var running: UUID?

    /// How many groups have ended (committed or rolled back) so far: for tests.
    var groupsEnded: Int { ended.withLock { $0 } }

    /// How many transactions of `key` wait for its gate now: for tests.
    func waiting(for key: UUID) -> Int {
        gates.withLock { $0[key]?.gate.waiting ?? 0 }
    }

    /// The gate of `key`, kept while anyone uses it (until the matching ``leave(_:)``).
    func enter(_ key: UUID) -> WriteGate {
        gates.withLock { gates in
            if var entry = gates[key] {
                entry.users += 1
                gates[key] = entry
                return entry.gate
            }
            let gate = WriteGate()
            gates[key] = Entry(gate: gate, users: 1)
            return gate
        }
    }

    func leave(_ key: UUID) {
        gates.withLock { gates in
            guard var entry = gates[key] else { return }
            entry.users -= 1
            gates[key] = entry.users == 0 ? nil : entry
        }
    }

    func groupEnded() {
        ended.withLock { $0 += 1 }
    }
}

extension Database {
    /// ``transaction(_:)`` for a write that belongs to `key` (the user whose rows it writes): on PostgreSQL, grouped
    /// with that key's concurrent transactions in this instance (``KeyedCommitGroups``). A body grouped so must not
    /// wait for another task's transaction of the same key.
    package func transaction<Result: Sendable>(
        groupedBy key: UUID, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        guard let keyedGroups, KeyedCommitGroups.running != key else { return try await transaction(body) }
        let gate = keyedGroups.enter(key)
        defer { keyedGroups.leave(key) }
        return try await KeyedCommitGroups.$running.withValue(key) {
            try await keyedTransaction(gate: gate, groups: keyedGroups, body)
        }
    }

    /// Waits at the key's gate: run by its holder in its group, or handed the gate to lead a group of its own.
    private func keyedTransaction<Result: Sendable>(
        gate: WriteGate, groups: KeyedCommitGroups, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        countTransaction(1)
        defer { countTransaction(-1) }
        let hooks = newTransactionHooks()
        let queuedOutcome = MemberOutcome<Result>()
        let scope = RequestScope.current
        let queued = QueuedTransaction { [self] connection, group in
            let outcome = await RequestScope.$current.withValue(scope) { await self.runKeyedMember(body, hooks: hooks, group: group, on: connection) }
            queuedOutcome.set(outcome)
            if case .success = outcome.result { return (true, outcome.broken) }
            return (false, outcome.broken)
        }
        if case .ran(let group) = await gate.acquireForTransaction(queued) {
            guard let outcome = queuedOutcome.recorded else { throw MemberRunWithoutOutcome() }
            let value = try outcome.result.get()  // its own failure: nothing of it was kept
            try await group.committed()
            hooks.runAfterCommit()
            return value
        }
        let value = try await leadKeyedGroup(body, hooks: hooks, gate: gate, groups: groups)
        hooks.runAfterCommit()
        return value
    }

    /// Runs `body` as the holder of the gate, in a new transaction, then the transactions queued meanwhile (up to
    /// ``GroupCommit/limit``), then commits, tells the members and hands the gate on. The body runs without a savepoint:
    /// when it throws, nothing else is in the transaction yet.
    private func leadKeyedGroup<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result, hooks: TransactionHooks, gate: WriteGate, groups: KeyedCommitGroups
    ) async throws -> Result {
        let group = GroupCommit.Group(hooks: newTransactionHooks())
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(
                try await withWriteConnection { connection in
                    try await connection.raw("BEGIN").run()
                    do {
                        let value = try await TransactionHooks.$current.withValue(hooks) { try await body(connection) }
                        hooks.adopt(into: group.hooks)
                        group.join()
                        var broken: (any Error)?
                        while broken == nil, group.members < GroupCommit.limit, let (next, admit) = gate.takeQueuedTransaction() {
                            let ran = await next.run(connection, group)
                            if ran.succeeded { group.join() }
                            broken = ran.broken
                            admit(group)
                        }
                        if let broken { throw broken }
                        // The members' work before the commit, once, in the group's scope.
                        try await TransactionHooks.$current.withValue(group.hooks) { try await group.hooks.run(on: connection) }
                        try await connection.raw("COMMIT").run()
                        return value
                    } catch {
                        await self.rollBack(on: connection)
                        throw error
                    }
                }
            )
        } catch {
            result = .failure(error)
        }
        let outcome = result.map { _ in () }
        if case .success = outcome { group.hooks.runAfterCommit() }
        groups.groupEnded()
        group.finish(outcome)
        gate.release()
        return try result.get()
    }

    /// Runs a queued member's `body` as a savepoint of the group's transaction on `connection`, rolled back to when it
    /// throws. `broken`: the error that left the transaction unusable.
    private func runKeyedMember<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result, hooks: TransactionHooks, group: GroupCommit.Group, on connection: any SQLDatabase
    ) async -> (result: Swift.Result<Result, any Error>, broken: (any Error)?) {
        do {
            try await connection.raw("SAVEPOINT fitbase_member").run()
        } catch {
            return (.failure(error), error)
        }
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await TransactionHooks.$current.withValue(hooks) { try await body(connection) })
        } catch {
            result = .failure(error)
        }
        // A kept member's savepoint is left for the commit to end (no statement of its own); the next member's
        // savepoint of the same name nests in it, and rolling back to that name goes back to the newest one.
        // ``GroupCommit/limit`` keeps the nesting within PostgreSQL's cache of a transaction's subtransactions (64).
        guard case .failure = result else {
            hooks.adopt(into: group.hooks)
            return (result, nil)
        }
        do {
            try await connection.raw("ROLLBACK TO SAVEPOINT fitbase_member").run()
        } catch {
            return (result, error)
        }
        return (result, nil)
    }
}

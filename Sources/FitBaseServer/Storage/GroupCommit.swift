import Foundation
import SQLKit
import Synchronization

/// SQLite write transactions committed in groups: one commit for the transactions that queued up while the one
/// before ran.
///
/// SQLite has one writer, and every transaction pays for its commit: the pages it dirtied written to the log (a sync
/// entry, an audit entry and an event each touch their table's last page and an index or two), then copied back by the
/// checkpointer. Under load most writes arrive while another runs. So a transaction that finds the write gate handed
/// to it with a group's transaction still open runs inside it: each transaction is a savepoint of the group's
/// (released when its body returns, rolled back to when it throws, so a failure undoes its own writes alone, as
/// before) and, while the next waiter is another transaction and the group is under ``limit``, the gate passes on
/// without a commit. The last transaction of the group commits; every member returns once that commit succeeded
/// (and fails if it did not), with its after-commit hooks run then, never before.
///
/// The transaction that holds the gate runs those queued behind it itself, in its task, one after another
/// (``Database/groupedTransaction(gate:pool:groups:_:)``): each under its own member's ``RequestScope`` (the one
/// task-local code on a connection may read, as PostgreSQL's pool carries it too), with its own hooks; its result or
/// error is handed to its member, which waits for the group's commit in its own task and runs its after-commit work
/// there. A checkpoint pass waiting at the gate ends the group (it is handed the gate only after a commit).
final class GroupCommit: Sendable {
    /// The most transactions one commit takes.
    static let limit = 32

    /// The open group's commit, which its members await.
    final class Group: Sendable {
        /// What the members whose work is kept asked to run before the commit (``TransactionHooks/adopt(into:)``), run
        /// once after the last of them; and what that work asks to run after the commit.
        let hooks: TransactionHooks

        init(hooks: TransactionHooks) {
            self.hooks = hooks
        }

        private struct State {
            var members = 0
            var outcome: Result<Void, any Error>?
            var waiting: [CheckedContinuation<Void, any Error>] = []
        }

        private let state = Mutex(State())

        var members: Int { state.withLock { $0.members } }

        func join() {
            state.withLock { $0.members += 1 }
        }

        /// Waits for the group's commit; throws its failure.
        func committed() async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.outcome == nil { state.waiting.append(continuation) }
                    return state.outcome
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        }

        func finish(_ outcome: Result<Void, any Error>) {
            let waiting = state.withLock { state in
                state.outcome = outcome
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume(with: outcome) }
        }
    }

    /// The group whose transaction is open on the write connection (set and read by the gate's holder only).
    private let open = Mutex<Group?>(nil)
    private let commits = Mutex(0)

    /// How many groups have ended (committed or rolled back) so far: for tests.
    var groupsEnded: Int { commits.withLock { $0 } }

    /// The open group, if the gate was handed over with one; `nil` when the holder begins a new one.
    func takeOver() -> Group? {
        open.withLock { $0 }
    }

    func opened(_ group: Group) {
        open.withLock { $0 = group }
    }

    func closed() {
        open.withLock { $0 = nil }
        commits.withLock { $0 += 1 }
    }
}

/// A write transaction waiting for the write gate, which the gate's holder may run itself in its open group
/// (``WriteGate/takeQueuedTransaction()``): `run` runs it as a savepoint of the open transaction on the connection it
/// is given, and answers whether it succeeded (it then joins the group) and the error that broke the transaction, if
/// any.
struct QueuedTransaction: Sendable {
    let run: @Sendable (any SQLDatabase, GroupCommit.Group) async -> (succeeded: Bool, broken: (any Error)?)
}

/// What one member of a commit group did: its body's result or error, and the error that broke the group's
/// transaction (its savepoint could not be taken, released or rolled back to).
final class MemberOutcome<Result: Sendable>: Sendable {
    typealias Outcome = (result: Swift.Result<Result, any Error>, broken: (any Error)?)
    private let outcome = Mutex<Outcome?>(nil)

    func set(_ value: Outcome) {
        outcome.withLock { $0 = value }
    }

    var recorded: Outcome? {
        outcome.withLock { $0 }
    }
}

/// A member run by the holder of the gate left no outcome (cannot happen: it is recorded before its waiter is told).
struct MemberRunWithoutOutcome: Error {}

extension Database {
    /// ``transaction(_:)`` on SQLite: a member of a commit group (``GroupCommit``).
    ///
    /// A transaction that finds the gate held queues for it. The holder, once its own body has run, runs the
    /// transactions queued meanwhile itself, one after another in its group (each a savepoint of its own, under its
    /// member's request scope, as PostgreSQL's pool carries that scope onto its connection), and tells each member
    /// which group to wait for: under load a dozen writes share a commit, and handing the gate from one member's task
    /// to the next made each wait its turn in the task queue behind the request work of every connection — most of the
    /// writer's time per write, more than its SQL. A member's body, results, after-commit hooks and error stay its own.
    func groupedTransaction<Result: Sendable>(
        gate: WriteGate, pool: SQLiteConnectionPool, groups: GroupCommit, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        let hooks = newTransactionHooks()
        let queuedOutcome = MemberOutcome<Result>()
        let scope = RequestScope.current
        let queued = QueuedTransaction { [self] connection, group in
            let outcome = await RequestScope.$current.withValue(scope) { await self.runMember(body, hooks: hooks, group: group, on: connection) }
            queuedOutcome.set(outcome)
            if case .success = outcome.result { return (true, outcome.broken) }
            return (false, outcome.broken)
        }
        let (result, group): (Swift.Result<Result, any Error>, GroupCommit.Group)
        if case .ran(let ranIn) = await gate.acquireForTransaction(queued) {
            guard let outcome = queuedOutcome.recorded else { throw MemberRunWithoutOutcome() }
            (result, group) = (outcome.result, ranIn)
        } else {
            (result, group) = try await lead(body, hooks: hooks, gate: gate, pool: pool, groups: groups)
        }
        let value = try result.get()  // a body's own failure: nothing of it was kept
        try await group.committed()
        hooks.runAfterCommit()
        return value
    }

    /// Runs `body` as the holder of the gate: in the group handed over with it, or in a new one; then the transactions
    /// queued meanwhile, in the same group; then hands the gate on with the group open, or ends the group. Returns the
    /// body's outcome and its group, whose commit the caller awaits.
    private func lead<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result, hooks: TransactionHooks, gate: WriteGate, pool: SQLiteConnectionPool,
        groups: GroupCommit
    ) async throws -> (Swift.Result<Result, any Error>, GroupCommit.Group) {
        let handedOver = groups.takeOver()
        let group = handedOver ?? GroupCommit.Group(hooks: newTransactionHooks())
        // What this member did, and whether the transaction itself is no longer usable (`broken`: by this member or by
        // one it ran; the group is rolled back).
        let outcome: (result: Swift.Result<Result, any Error>, broken: (any Error)?)
        do {
            outcome = try await pool.withWriteConnection(rollingBackLeftovers: false) { connection in
                if handedOver == nil {
                    try await connection.raw("BEGIN IMMEDIATE").run()
                    groups.opened(group)
                }
                let own = await self.runMember(body, hooks: hooks, group: group, on: connection)
                if case .success = own.result { group.join() }
                var broken = own.broken
                while broken == nil, group.members < GroupCommit.limit, let (next, admit) = gate.takeQueuedTransaction() {
                    let ran = await next.run(connection, group)
                    if ran.succeeded { group.join() }
                    broken = ran.broken
                    admit(group)
                }
                return (own.result, broken)
            }
        } catch {
            // BEGIN failed (another process holds the lock past the busy timeout), or the pool is shut down: an open
            // group is rolled back, its members told.
            if groups.takeOver() != nil { await finish(group, pool: pool, groups: groups, gate: gate, broken: error) } else { gate.release() }
            throw error
        }
        if outcome.broken != nil || group.members >= GroupCommit.limit || !gate.handOverToTransaction() {
            await finish(group, pool: pool, groups: groups, gate: gate, broken: outcome.broken)
        }
        return (outcome.result, group)
    }

    /// Runs one member's `body` as a savepoint of the open transaction on `connection`: released when it returns,
    /// rolled back to when it throws (so a failure undoes its own writes alone). What a kept body asked to run before
    /// the commit goes to its `group`'s hooks. `broken` is the error that left the transaction unusable (the savepoint
    /// could not be taken, released or rolled back to).
    private func runMember<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result, hooks: TransactionHooks, group: GroupCommit.Group, on connection: any SQLDatabase
    ) async -> (result: Swift.Result<Result, any Error>, broken: (any Error)?) {
        do {
            try await connection.raw("SAVEPOINT fitbase_transaction").run()
        } catch {
            return (.failure(error), error)
        }
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(
                try await OpenWriteTransaction(of: self, on: connection).run {
                    try await TransactionHooks.$current.withValue(hooks) { try await body(connection) }
                }
            )
        } catch {
            result = .failure(error)
        }
        if case .success = result { hooks.adopt(into: group.hooks) }
        do {
            if case .failure = result { try await connection.raw("ROLLBACK TO SAVEPOINT fitbase_transaction").run() }
            try await connection.raw("RELEASE SAVEPOINT fitbase_transaction").run()
        } catch {
            return (result, error)
        }
        return (result, nil)
    }

    /// Commits the group (rolls it back when `broken`), tells its members, and frees the gate for the next waiter.
    private func finish(_ group: GroupCommit.Group, pool: SQLiteConnectionPool, groups: GroupCommit, gate: WriteGate, broken: (any Error)?) async {
        let outcome: Swift.Result<Void, any Error>
        do {
            try await pool.withWriteConnection(rollingBackLeftovers: true) { connection in
                if let broken {
                    try? await connection.raw("ROLLBACK").run()
                    throw broken
                }
                do {
                    // The members' work before the commit, in the group's scope: what it writes may ask for
                    // after-commit work (the group's). Should it fail, the group is rolled back, its members told.
                    try await OpenWriteTransaction(of: self, on: connection).run {
                        try await TransactionHooks.$current.withValue(group.hooks) { try await group.hooks.run(on: connection) }
                    }
                } catch {
                    try? await connection.raw("ROLLBACK").run()
                    throw error
                }
                try await connection.raw("COMMIT").run()
            }
            group.hooks.runAfterCommit()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        groups.closed()
        group.finish(outcome)
        gate.release()
    }
}

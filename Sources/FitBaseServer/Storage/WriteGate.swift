import Synchronization

/// Lets one SQLite write transaction run at a time within this process, in arrival order, while the others wait
/// without holding a connection or a thread.
///
/// SQLite has a single writer. Without the gate, transactions that wait on `busy_timeout` would sleep on threads
/// the lock holder needs to finish, so a burst of writers stalls until the timeout and fails with `database is
/// locked`. `busy_timeout` still covers other processes (e.g. `fitbase migrate` beside `serve`).
///
/// A lock, not an actor: taking a free gate and handing it to the next writer cost no executor hop (an actor here
/// added two hops to every write, inside the one section every write of the process queues for).
final class WriteGate: Sendable {
    fileprivate struct State {
        var isHeld = false
        /// Waiters in arrival order (and whether each runs a write transaction); those before `next` have been handed
        /// the gate.
        var waiters: [Waiter] = []
        var next = 0
    }

    /// A caller waiting for the gate: a plain one (a checkpoint), or a write transaction, which may be run by the
    /// holder instead (``takeQueuedTransaction()``).
    fileprivate enum Waiter {
        case plain(CheckedContinuation<Void, Never>)
        case transaction(CheckedContinuation<TransactionAdmission, Never>, QueuedTransaction)
        /// Handed the gate, or taken to run: nothing of it is kept (a queued transaction holds its body, and what
        /// that body holds, such as a push's records).
        case gone
    }

    /// How a write transaction waiting for the gate got through: handed the gate, or run by the holder of the gate
    /// inside its commit group (its member is then told that group).
    enum TransactionAdmission {
        case gate
        case ran(GroupCommit.Group)
    }

    private let state = Mutex(State())

    /// How many callers wait for the gate now (for tests).
    var waiting: Int { state.withLock { $0.waiters.count - $0.next } }

    /// Runs `body` once every earlier caller has finished.
    func run<Result: Sendable>(_ body: @Sendable () async throws -> Result) async throws -> Result {
        await acquire()
        do {
            let result = try await body()
            release()
            return result
        } catch {
            release()
            throw error
        }
    }

    /// Waits for the gate (a checkpoint: never handed over with a transaction open).
    func acquire() async {
        await wait(granted: ()) { .plain($0) }
    }

    /// Waits for the gate to run a write transaction: either the gate is handed over (possibly with a group's
    /// transaction still open: ``handOverToTransaction()``), or its holder runs `queued` itself, in its open group
    /// (``takeQueuedTransaction()``), and says which group.
    func acquireForTransaction(_ queued: QueuedTransaction) async -> TransactionAdmission {
        await wait(granted: .gate) { .transaction($0, queued) }
    }

    /// Takes the gate when it is free (answering `granted`), else queues as the waiter `waiter` makes and waits to be
    /// told.
    private func wait<Admission: Sendable>(granted: Admission, as waiter: (CheckedContinuation<Admission, Never>) -> Waiter) async -> Admission {
        if state.withLock({ $0.take() }) { return granted }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Admission, Never>) in
            let taken = state.withLock { state in
                if state.take() { return true }
                state.waiters.append(waiter(continuation))
                return false
            }
            if taken { continuation.resume(returning: granted) }
        }
    }

    /// The longest waiter's transaction, taken off the queue for the holder of the gate to run (the gate stays held),
    /// when that waiter is a write transaction; `nil` otherwise. `admit` tells its waiter, once it ran, in which group.
    func takeQueuedTransaction() -> (queued: QueuedTransaction, admit: (GroupCommit.Group) -> Void)? {
        guard let (continuation, queued) = state.withLock({ $0.takeNextTransaction() }) else { return nil }
        return (queued, { group in continuation.resume(returning: .ran(group)) })
    }

    /// Hands the gate to the longest waiter when it waits to run a write transaction, and answers `true`; otherwise
    /// keeps it and answers `false`.
    func handOverToTransaction() -> Bool {
        guard let (continuation, _) = state.withLock({ $0.takeNextTransaction() }) else { return false }
        continuation.resume(returning: .gate)
        return true
    }

    /// Hands the gate to the longest waiter (it stays held), or frees it.
    func release() {
        let waiter = state.withLock { state -> Waiter? in
            guard state.next < state.waiters.count else {
                state.isHeld = false
                state.waiters.removeAll(keepingCapacity: true)
                state.next = 0
                return nil
            }
            let waiter = state.waiters[state.next]
            state.dropNext()
            return waiter
        }
        switch waiter {
        case .plain(let continuation): continuation.resume()
        case .transaction(let continuation, _): continuation.resume(returning: .gate)
        case .gone, nil: break
        }
    }
}

extension WriteGate.State {
    /// Holds the gate if it was free; whether it was.
    fileprivate mutating func take() -> Bool {
        guard !isHeld else { return false }
        isHeld = true
        return true
    }

    /// The longest waiter, taken off the queue, when it waits to run a write transaction.
    fileprivate mutating func takeNextTransaction() -> (CheckedContinuation<WriteGate.TransactionAdmission, Never>, QueuedTransaction)? {
        guard next < waiters.count, case .transaction(let continuation, let queued) = waiters[next] else { return nil }
        dropNext()
        return (continuation, queued)
    }

    /// Past the longest waiter (handed the gate, or taken to run by its holder).
    fileprivate mutating func dropNext() {
        waiters[next] = .gone
        next += 1
        // Under steady load the queue never empties: drop the handed-over part now and then.
        if next >= 1_024 {
            waiters.removeFirst(next)
            next = 0
        }
    }
}

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
        var waiters: [(continuation: CheckedContinuation<Void, Never>, isTransaction: Bool)] = []
        var next = 0
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

    /// Waits for the gate (`isTransaction`: to run a write transaction, which may be handed the gate with a group's
    /// transaction still open: ``handOverToTransaction()``).
    func acquire(isTransaction: Bool = false) async {
        let taken = state.withLock { state in
            guard !state.isHeld else { return false }
            state.isHeld = true
            return true
        }
        guard !taken else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let taken = state.withLock { state in
                guard state.isHeld else {
                    state.isHeld = true
                    return true
                }
                state.waiters.append((continuation, isTransaction))
                return false
            }
            if taken { continuation.resume() }
        }
    }

    /// Hands the gate to the longest waiter when it waits to run a write transaction, and answers `true`; otherwise
    /// keeps it and answers `false`.
    func handOverToTransaction() -> Bool {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.next < state.waiters.count, state.waiters[state.next].isTransaction else { return nil }
            return state.handToNext()
        }
        waiter?.resume()
        return waiter != nil
    }

    /// Hands the gate to the longest waiter (it stays held), or frees it.
    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.next < state.waiters.count else {
                state.isHeld = false
                state.waiters.removeAll(keepingCapacity: true)
                state.next = 0
                return nil
            }
            return state.handToNext()
        }
        waiter?.resume()
    }
}

extension WriteGate.State {
    /// The longest waiter, now holding the gate.
    fileprivate mutating func handToNext() -> CheckedContinuation<Void, Never> {
        let waiter = waiters[next].continuation
        next += 1
        // Under steady load the queue never empties: drop the handed-over part now and then.
        if next >= 1_024 {
            waiters.removeFirst(next)
            next = 0
        }
        return waiter
    }
}

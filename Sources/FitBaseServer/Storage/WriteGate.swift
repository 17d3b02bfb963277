/// Lets one SQLite write transaction run at a time within this process, in arrival order, while the others wait
/// without holding a connection or a thread.
///
/// SQLite has a single writer. Without the gate, transactions that wait on `busy_timeout` occupy the blocking thread
/// pool that the lock holder needs to finish, so a burst of writers stalls until the timeout and fails with
/// `database is locked`. `busy_timeout` still covers other processes (e.g. `fitbase migrate` beside `serve`).
actor WriteGate {
    private var isHeld = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var nextWaiter = 0

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

    private func acquire() async {
        guard isHeld else {
            isHeld = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        guard nextWaiter < waiters.count else {
            isHeld = false
            waiters.removeAll(keepingCapacity: true)
            nextWaiter = 0
            return
        }
        let waiter = waiters[nextWaiter]
        nextWaiter += 1
        waiter.resume()
    }
}

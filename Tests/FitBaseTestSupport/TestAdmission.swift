import Foundation
import Synchronization
import Testing

/// Bounds how many tests hold a database (and the application around it) at once.
///
/// Swift Testing starts every test at the same time. On a 2-core machine, several hundred applications migrating and
/// serving at once starve each other past the timeouts the server rightly keeps (SQLite's `busy_timeout`, the
/// connection pool's request timeout), and tests fail for load, not for a fault. Tests beyond the bound wait before
/// they start, where no timeout runs. `FITBASE_TEST_CONCURRENCY` overrides the bound (default: 4 per core).
///
/// A load test (hundreds of concurrent requests against one application) can ask for every slot, so it measures its
/// own concurrency rather than the neighbours'. Re-entrant: a test that already holds a slot (a helper nested in
/// another) does not take more.
///
/// With `FITBASE_TEST_TIMINGS` set, each test writes how long it held its slot to standard error (`slot 1.234s name`):
/// the time it ran, not the time it waited, which is what to sort by when the suite gets slower.
final class TestAdmission: Sendable {
    static let shared = TestAdmission(
        slots: ProcessInfo.processInfo.environment["FITBASE_TEST_CONCURRENCY"].flatMap(Int.init).map { max(1, $0) }
            ?? max(4, 4 * ProcessInfo.processInfo.activeProcessorCount)
    )

    @TaskLocal private static var holdsSlot = false

    private struct Waiter {
        var slots: Int
        var continuation: CheckedContinuation<Void, Never>
    }
    private struct State {
        var free: Int
        var waiters: [Waiter] = []

        /// Hands slots to waiters in arrival order while the first in line fits; returns the ones admitted.
        mutating func admitWaiters() -> [CheckedContinuation<Void, Never>] {
            var admitted: [CheckedContinuation<Void, Never>] = []
            while let first = waiters.first, first.slots <= free {
                free -= first.slots
                admitted.append(waiters.removeFirst().continuation)
            }
            return admitted
        }
    }
    private let slots: Int
    private let state: Mutex<State>

    init(slots: Int) {
        self.slots = slots
        state = Mutex(State(free: slots))
    }

    /// Runs `body` once a slot (or, `exclusive`, every slot) is free, and frees it afterwards.
    func admit<Result>(exclusive: Bool = false, _ body: () async throws -> Result) async throws -> Result {
        if Self.holdsSlot { return try await body() }
        let wanted = exclusive ? slots : 1
        await acquire(wanted)
        let admitted = ContinuousClock.now
        defer {
            release(wanted)
            if Self.reportsTimings { Self.report(ContinuousClock.now - admitted) }
        }
        return try await Self.$holdsSlot.withValue(true) { try await body() }
    }

    private func acquire(_ wanted: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.waiters.append(Waiter(slots: wanted, continuation: continuation))
                return state.admitWaiters()
            }
            for waiter in admitted { waiter.resume() }
        }
    }

    private static let reportsTimings = ProcessInfo.processInfo.environment["FITBASE_TEST_TIMINGS"] != nil

    private static func report(_ held: Duration) {
        let seconds = Double(held.components.seconds) + Double(held.components.attoseconds) / 1e18
        let name = Test.current?.name ?? "?"
        FileHandle.standardError.write(Data("slot \(String(format: "%.3f", seconds))s \(name)\n".utf8))
    }

    private func release(_ count: Int) {
        let admitted = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.free += count
            return state.admitWaiters()
        }
        for waiter in admitted { waiter.resume() }
    }
}

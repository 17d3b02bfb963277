import Foundation
import Synchronization

/// The time source of the app layer: what "now" is, and waiting. Injected so debounces, TTLs, flush intervals and
/// fake latency run on a ``TestKitClock`` in tests, without real waiting.
public protocol KitClock: Sendable {
    /// The current instant.
    var now: Date { get }
    /// Waits `duration`; throws `CancellationError` when the task is cancelled first.
    func sleep(for duration: Duration) async throws
}

/// The real clock: the system's date and `Task.sleep`.
public struct SystemKitClock: KitClock {
    public init() {}

    public var now: Date { Date() }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

/// A clock that moves only when told (``advance(by:)``): sleepers wake when the clock passes their deadline.
public final class TestKitClock: KitClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [UUID: Sleeper] = [:]
    }

    private let state: Mutex<State>

    /// A clock reading `now` (by default 2026-03-02 09:00 UTC, a Monday).
    public init(now: Date = Date(timeIntervalSince1970: 1_772_442_000)) {
        state = Mutex(State(now: now))
    }

    public var now: Date { state.withLock { $0.now } }

    /// How many tasks are waiting on this clock (to wait until a debounce has started sleeping).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(for duration: Duration) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let resumeNow = state.withLock { state -> Bool in
                    let deadline = state.now.addingTimeInterval(duration.timeInterval)
                    if deadline <= state.now { return true }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on by `duration` and wakes every sleeper whose deadline has passed.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.addingTimeInterval(duration.timeInterval)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Waits (yielding) until at least `count` tasks sleep on the clock, so a test can advance past their deadline.
    public func waitForSleepers(_ count: Int = 1) async {
        while sleeperCount < count { await Task.yield() }
    }
}

extension Duration {
    /// The duration in seconds.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

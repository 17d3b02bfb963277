import FitBaseCore
import Foundation
import Synchronization

/// The controls of a fake service: latency, failures (of every operation or of one by name), and the calls it
/// received — to show a loading state, an error state or a retry in previews and tests.
///
/// Operation names are the protocol method's base name (`logPeriod`, `workouts`, `join` …).
public final class FakeKnobs: Sendable {
    private struct State {
        var latency: Duration = .zero
        var failEverything: KitError?
        var failures: [String: KitError] = [:]
        var failOnce: [String: KitError] = [:]
        var calls: [String] = []
    }

    private let state = Mutex(State())

    /// Knobs with no latency and no failures.
    public init() {}

    /// How long every operation takes (waited on the services' clock).
    public var latency: Duration {
        get { state.withLock { $0.latency } }
        set { state.withLock { $0.latency = newValue } }
    }

    /// Makes every operation fail with `error` (`nil` to stop).
    public func failEverything(with error: KitError?) {
        state.withLock { $0.failEverything = error }
    }

    /// Makes `operation` fail with `error` until ``clearFailures()``.
    public func fail(_ operation: String, with error: KitError = .offline) {
        state.withLock { $0.failures[operation] = error }
    }

    /// Makes the next call of `operation` fail with `error`, and the ones after succeed (a retry).
    public func failOnce(_ operation: String, with error: KitError = .offline) {
        state.withLock { $0.failOnce[operation] = error }
    }

    /// Stops every injected failure.
    public func clearFailures() {
        state.withLock {
            $0.failEverything = nil
            $0.failures = [:]
            $0.failOnce = [:]
        }
    }

    /// The operations called so far, in order.
    public var calls: [String] { state.withLock { $0.calls } }

    /// How many times `operation` was called.
    public func callCount(_ operation: String) -> Int { calls.filter { $0 == operation }.count }

    /// Records a call of `operation` that cannot fail.
    func record(_ operation: String) {
        state.withLock { $0.calls.append(operation) }
    }

    /// Records a call of `operation`, waits the latency, and throws the failure injected for it, if any.
    func enter(_ operation: String, clock: any KitClock) async throws(KitError) {
        let (latency, failure) = state.withLock { state -> (Duration, KitError?) in
            state.calls.append(operation)
            let failure = state.failOnce.removeValue(forKey: operation) ?? state.failures[operation] ?? state.failEverything
            return (state.latency, failure)
        }
        if latency > .zero {
            do { try await clock.sleep(for: latency) } catch { throw .cancelled }
        }
        if Task.isCancelled { throw .cancelled }
        if let failure { throw failure }
    }
}

/// What the fakes start with.
public enum FakeScenario: Sendable, Equatable {
    /// Signed in with a filled-in profile, a few months of periods and workouts, a group with members, notifications,
    /// two weeks of health samples: every screen has something to show.
    case populated
    /// Signed in with nothing recorded yet: every screen's empty state.
    case empty
    /// Nobody signed in (the sign-in and onboarding screens).
    case signedOut
}

import FitBaseCore
import Foundation
import IssueReporting
import Synchronization

/// The operations of one fake service, named by the protocol method's base name (`logPeriod`, `workouts`, `join` …):
/// what its knobs fail, slow down, count and — in a test's fakes — leave unimplemented.
public protocol FakeOperation: RawRepresentable<String>, Hashable, Sendable, CaseIterable {}

/// The controls shared by every fake's knobs, whatever its operations: to fail or slow down all fakes at once.
public protocol AnyFakeKnobs: AnyObject, Sendable {
    /// How long every operation takes.
    var latency: Duration { get set }
    /// Makes every operation fail with `error` (`nil` to stop).
    func failEverything(with error: KitError?)
    /// Stops every injected failure.
    func clearFailures()
    /// From now on only the operations named by `implement(_:)` answer; a call of any other reports an issue.
    func unimplementAll()
}

/// The controls of a fake service: latency, failures (of every operation or of one), which operations a test set up,
/// and the calls it received — to show a loading state, an error state or a retry in previews and tests.
///
/// A fake made for a test (``FakeScenario/strict``, or ``unimplementAll()``) answers only the operations the
/// test named with ``implement(_:)``; any other call reports an issue — the test fails where it touched what it did not set up — and
/// throws ``unimplementedError(_:)`` instead of answering with canned data.
public final class FakeKnobs<Operation: FakeOperation>: AnyFakeKnobs {
    private struct State {
        var latency: Duration = .zero
        var failEverything: KitError?
        var failures: [Operation: KitError] = [:]
        var failOnce: [Operation: KitError] = [:]
        var calls: [Operation] = []
        /// `nil`: every operation answers (previews); otherwise only these do.
        var implemented: Set<Operation>?
    }

    private let service: String
    private let state: Mutex<State>

    /// Knobs of the fake named `service` (in issues), with no latency, no failures and every operation answering.
    init(_ service: String) {
        self.service = service
        self.state = Mutex(State())
    }

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
    public func fail(_ operation: Operation, with error: KitError = .offline) {
        state.withLock { $0.failures[operation] = error }
    }

    /// Makes the next call of `operation` fail with `error`, and the ones after succeed (a retry).
    public func failOnce(_ operation: Operation, with error: KitError = .offline) {
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

    /// From now on only the operations named by ``implement(_:)`` answer; a call of any other reports an issue.
    public func unimplementAll() {
        state.withLock { $0.implemented = [] }
    }

    /// Lets `operations` answer from the fake's state (a test's fakes answer nothing it did not name).
    public func implement(_ operations: Operation...) {
        state.withLock { state in state.implemented?.formUnion(operations) }
    }

    /// The operations called so far, in order.
    public var calls: [Operation] { state.withLock { $0.calls } }

    /// How many times `operation` was called.
    public func callCount(_ operation: Operation) -> Int { calls.filter { $0 == operation }.count }

    /// What a call of an operation the test did not set up throws (after reporting the issue): a server error with no
    /// problem code, whose message names the fake and the operation.
    public func unimplementedError(_ operation: Operation) -> KitError {
        KitError(.server, message: "\(service).\(operation.rawValue) is unimplemented: the test did not set it up.")
    }

    /// Records a call of `operation` that cannot fail; reports an issue when the test did not set it up.
    func record(_ operation: Operation) {
        let implemented = state.withLock { state in
            state.calls.append(operation)
            return state.implemented?.contains(operation) ?? true
        }
        if !implemented {
            reportIssue(unimplementedError(operation).message)
        }
    }

    /// Records a call of `operation`, waits the latency, and throws the failure injected for it, if any — or, when
    /// the test did not set `operation` up, reports an issue and throws ``unimplementedError(_:)``.
    func enter(_ operation: Operation, clock: any KitClock) async throws(KitError) {
        let (latency, failure, implemented) = state.withLock { state -> (Duration, KitError?, Bool) in
            state.calls.append(operation)
            let failure = state.failOnce.removeValue(forKey: operation) ?? state.failures[operation] ?? state.failEverything
            return (state.latency, failure, state.implemented?.contains(operation) ?? true)
        }
        guard implemented else {
            let error = unimplementedError(operation)
            reportIssue(error.message)
            throw error
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
    /// two weeks of health samples: every screen has something to show (previews, demos).
    case populated
    /// Signed in with nothing recorded yet: every screen's empty state.
    case empty
    /// Nobody signed in (the sign-in and onboarding screens).
    case signedOut
    /// For a test: the populated data, but every operation of every fake is unimplemented until the test names it
    /// (`fakes.groups.knobs.implement(.members)`); touching another reports an issue and throws.
    case strict
}

import Foundation
import Synchronization

/// Tells whether the network can be reached, so syncing resumes the moment it comes back instead of after its backoff.
/// ``NetworkPathReachability`` watches `NWPathMonitor` on Apple platforms; ``ManualReachability`` is set by hand
/// (Linux, tests, an app with its own monitor).
public protocol ReachabilityMonitor: Sendable {
    /// Whether the network is reachable now, then at every change, until the stream is dropped.
    func updates() -> AsyncStream<Bool>
}

/// Reachability set by hand with ``setReachable(_:)``.
public final class ManualReachability: ReachabilityMonitor {
    private struct State {
        var reachable: Bool
        var observers: [UUID: AsyncStream<Bool>.Continuation] = [:]
    }

    private let state: Mutex<State>

    /// Starts `reachable`.
    public init(reachable: Bool = true) {
        state = Mutex(State(reachable: reachable))
    }

    /// Whether the network is reachable now.
    public var isReachable: Bool { state.withLock { $0.reachable } }

    /// Changes reachability and tells every observer.
    public func setReachable(_ reachable: Bool) {
        let observers = state.withLock { state -> [AsyncStream<Bool>.Continuation] in
            state.reachable = reachable
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(reachable) }
    }

    public func updates() -> AsyncStream<Bool> {
        // Every change is kept until read: an off-and-on-again must not collapse into "still on".
        let (stream, continuation) = AsyncStream<Bool>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        let reachable = state.withLock { state in
            state.observers[id] = continuation
            return state.reachable
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.observers.removeValue(forKey: id) } }
        continuation.yield(reachable)
        return stream
    }
}

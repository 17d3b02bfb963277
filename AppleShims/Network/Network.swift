// Shim of the part of Apple's Network framework FitBase's adapters call (path monitoring), written from Apple's
// documentation: same names, labels, optionality and Sendable-ness as the SDK. CI only
// (scripts/ci/apple-adapters.sh). `_NetworkShim` scripts the paths for AppleAdapterTests; adapters never name it.
import Dispatch
import Foundation
import Synchronization

/// An object that contains information about the properties of the network that a connection uses, or that are
/// available to your app.
public struct NWPath: Sendable, Equatable, CustomDebugStringConvertible {
    /// The statuses of a network path.
    public enum Status: Sendable, Equatable, Hashable {
        /// The path has a usable route upon which to send and receive data.
        case satisfied
        /// The path does not have a usable route.
        case unsatisfied
        /// The path does not currently have a usable route, but a connection attempt will trigger network attachment.
        case requiresConnection
    }

    /// A status indicating whether a path can be used by connections.
    public let status: Status

    init(status: Status) {
        self.status = status
    }

    public var debugDescription: String { "\(status)" }
}

/// An observer that you use to monitor and react to network changes.
public final class NWPathMonitor: @unchecked Sendable {
    private struct State {
        var handler: (@Sendable (NWPath) -> Void)?
        var queue: DispatchQueue?
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Initializes a path monitor to observe all available interface types.
    public init() {}

    /// A handler that receives network path updates.
    @preconcurrency public final var pathUpdateHandler: (@Sendable (NWPath) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    /// The currently available network path observed by the path monitor.
    public final var currentPath: NWPath { _NetworkShim.paths.withLock { NWPath(status: $0.status) } }

    /// The queue on which path events are delivered.
    public final var queue: DispatchQueue? { state.withLock { $0.queue } }

    /// Starts monitoring path changes, and sets a queue on which to deliver path events.
    public final func start(queue: DispatchQueue) {
        state.withLock { $0.queue = queue }
        _NetworkShim.paths.withLock { $0.monitors.append(Weak(self)) }
        deliver(currentPath)
    }

    /// Stops receiving network path updates.
    public final func cancel() {
        state.withLock { $0.cancelled = true }
    }

    func deliver(_ path: NWPath) {
        let (handler, queue, cancelled) = state.withLock { ($0.handler, $0.queue, $0.cancelled) }
        guard !cancelled, let queue else { return }
        queue.async { handler?(path) }
    }

    var isMonitoring: Bool { state.withLock { $0.queue != nil && !$0.cancelled } }
}

struct Weak: @unchecked Sendable {
    weak var monitor: NWPathMonitor?
    init(_ monitor: NWPathMonitor) { self.monitor = monitor }
}

/// The device's network path, for AppleAdapterTests: every started monitor hears each change on its queue.
public enum _NetworkShim {
    struct Paths: Sendable {
        var status: NWPath.Status = .satisfied
        var monitors: [Weak] = []
    }

    static let paths = Mutex(Paths())

    /// Satisfied, no monitors.
    public static func reset() {
        paths.withLock { $0 = Paths() }
    }

    /// The path becomes `status`; started monitors that were not cancelled hear it.
    public static func setPath(_ status: NWPath.Status) {
        let monitors = paths.withLock { paths in
            paths.status = status
            paths.monitors.removeAll { $0.monitor == nil }
            return paths.monitors.compactMap(\.monitor)
        }
        for monitor in monitors { monitor.deliver(NWPath(status: status)) }
    }

    /// How many monitors are started and not cancelled (nor released).
    public static var activeMonitors: Int {
        paths.withLock { $0.monitors.compactMap(\.monitor) }.filter(\.isMonitoring).count
    }
}

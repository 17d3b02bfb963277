#if canImport(Network)
import Foundation
import Network

/// Reachability from `NWPathMonitor`: reachable while the current path is `satisfied`.
public struct NetworkPathReachability: ReachabilityMonitor {
    /// A monitor of every interface.
    public init() {}

    public func updates() -> AsyncStream<Bool> {
        let (stream, continuation) = AsyncStream<Bool>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let monitor = NWPathMonitor()
        monitor.pathUpdateHandler = { path in continuation.yield(path.status == .satisfied) }
        continuation.onTermination = { _ in monitor.cancel() }
        monitor.start(queue: DispatchQueue(label: "dev.fitbase.reachability"))
        return stream
    }
}
#endif

import FitBaseAPI
import FitBaseCore
import Foundation

/// An in-memory ``RemoteConfigService``: the values a test or preview sets, "fetched" by ``refresh()`` (which the knobs
/// can slow down or fail — a failed refresh keeps the last values, as the live service does offline).
public actor FakeRemoteConfigService: RemoteConfigService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case current, refresh
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeRemoteConfigService")
    private let clock: any KitClock
    /// What the "server" answers at the next refresh.
    private var served: [String: JSONValue]
    private var kept = RemoteConfigSnapshot()

    /// A fake whose server answers `values` (none: every flag has its in-app default).
    public init(values: [String: JSONValue] = [:], clock: any KitClock = SystemKitClock()) {
        self.served = values
        self.clock = clock
    }

    /// Changes what the next refresh fetches (an operator's change on the server).
    public func serve(_ values: [String: JSONValue]) {
        served = values
    }

    public func current() async -> RemoteConfigSnapshot {
        knobs.record(.current)
        return kept
    }

    public func refresh() async -> RemoteConfigSnapshot {
        do {
            try await knobs.enter(.refresh, clock: clock)
        } catch {
            return kept
        }
        kept = RemoteConfigSnapshot(values: served, fetchedAt: clock.now)
        return kept
    }
}

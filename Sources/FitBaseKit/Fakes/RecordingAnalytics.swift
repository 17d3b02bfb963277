import Foundation
import Synchronization

/// An ``AnalyticsService`` that keeps every event in memory, for tests and previews to read back.
public final class RecordingAnalytics: AnalyticsService {
    private let recorded = Mutex<[AnalyticsEvent]>([])

    /// An empty recorder.
    public init() {}

    /// Every event tracked so far, in order.
    public var events: [AnalyticsEvent] { recorded.withLock { $0 } }

    public func track(_ event: AnalyticsEvent) {
        recorded.withLock { $0.append(event) }
    }

    public func flush() async {}

    /// Forgets the events recorded so far.
    public func reset() {
        recorded.withLock { $0 = [] }
    }
}

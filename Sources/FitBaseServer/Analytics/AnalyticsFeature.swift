import FitBaseCore
import Foundation
import Logging
import ServiceLifecycle

/// Product analytics: the app's events (never health data), kept for a while and counted per day.
struct AnalyticsFeature: ServerFeature {
    let store: AnalyticsStore
    let configuration: AnalyticsConfiguration
    /// One account's batches per minute, in the database so every instance counts together.
    let rateLimit: RateLimiter.Rule
    private let retention: PeriodicService

    init(_ foundation: ServerFoundation) {
        let store = AnalyticsStore(database: foundation.database)
        let configuration = foundation.configuration.analytics
        self.store = store
        self.configuration = configuration
        rateLimit = RateLimiter.Rule(name: "analytics-user", limit: configuration.batchesPerMinute, window: 60)
        let (clock, logger) = (foundation.clock, foundation.logger)
        retention = .purge("analytics events", schedule: foundation.configuration.housekeeping, logger: logger) {
            try await store.purge(before: clock.now.addingTimeInterval(-TimeInterval(configuration.retentionDays) * 86_400))
        }
    }

    var dataOwners: [any AccountDataOwner] { [AnalyticsEventsOwner()] }
    var services: [any Service] { [retention] }
}

import FitBaseCore
import Foundation
import Logging
import ServiceLifecycle

/// App reports: errors, crashes and traces from the apps (never user data), kept for a while and summarized on the
/// console.
struct ReportsFeature: ServerFeature {
    let store: ReportsStore
    let configuration: ReportsConfiguration
    /// One account's, and one client address's, batches per minute, in the database so every instance counts together.
    let userLimit: RateLimiter.Rule
    let addressLimit: RateLimiter.Rule
    /// Every anonymous caller's batches together.
    let anonymousLimit: RateLimiter.Rule
    private let retention: PeriodicService

    init(_ foundation: ServerFoundation) {
        let store = ReportsStore(database: foundation.database)
        let configuration = foundation.configuration.reports
        self.store = store
        self.configuration = configuration
        userLimit = RateLimiter.Rule(name: "reports-user", limit: configuration.batchesPerMinute, window: 60)
        addressLimit = RateLimiter.Rule(name: "reports-address", limit: configuration.addressBatchesPerMinute, window: 60)
        anonymousLimit = RateLimiter.Rule(name: "reports-anonymous", limit: configuration.anonymousBatchesPerMinute, window: 60)
        let (clock, logger) = (foundation.clock, foundation.logger)
        retention = .purge("app reports", schedule: foundation.configuration.housekeeping, logger: logger) {
            try await store.purge(before: clock.now.addingTimeInterval(-TimeInterval(configuration.retentionDays) * 86_400))
        }
    }

    var services: [any Service] { [retention] }
}

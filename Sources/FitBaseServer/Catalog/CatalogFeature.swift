import Foundation
import Logging

/// Workouts and programs: the catalog every other feature recommends from, premium items marked for the caller's tier.
struct CatalogFeature: ServerFeature {
    let database: Database
    let store: CatalogStore
    let premiumAccess: any PremiumContentAccess
    /// The workout reads answered from pre-encoded JSON (see ``CatalogResponses``).
    let responses: CatalogResponses
    /// Who hears of a deleted workout (its media's files go).
    let deletions = WorkoutDeletions()
    private let loadsDemoCatalog: Bool
    private let logger: Logger
    private let clock: ServerClock

    init(_ foundation: ServerFoundation, billing: BillingFeature) {
        database = foundation.database
        store = CatalogStore(database: foundation.database)
        premiumAccess = billing.entitlements
        responses = CatalogResponses(store: store, premiumAccess: billing.entitlements)
        loadsDemoCatalog = foundation.configuration.loadsDemoCatalog
        logger = foundation.logger
        clock = foundation.clock
    }

    func start() async throws {
        if loadsDemoCatalog { try await DemoCatalog.loadIfEmpty(into: database, now: clock.now, logger: logger) }
    }
}

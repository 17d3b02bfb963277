import Foundation
import Logging
import ServiceLifecycle

/// Offline sync: every user's change feed over the synced collections of the other features, its pull and its push.
struct SyncFeature: ServerFeature {
    /// Changes a pull answers when the request names no limit, and the most it may ask for.
    static let defaultLimit = 500
    static let maximumLimit = 1000

    let database: Database
    /// What each collection checks, writes and shows.
    let collections: SyncedCollections
    let pusher: SyncPusher
    private let retention: PeriodicService

    /// - Parameter collections: every feature's synced collections, each registered once.
    init(_ foundation: ServerFoundation, collections: [any SyncedCollection], registry: AccountDataRegistry) {
        let (configuration, database, logger) = (foundation.configuration, foundation.database, foundation.logger)
        self.database = database
        self.collections = SyncedCollections(collections)
        pusher = SyncPusher(database: database, collections: self.collections)
        let housekeeping = Housekeeping(
            database: database, registry: registry,
            unverifiedAccounts: configuration.accounts.unverifiedAccountDays.map {
                UnverifiedAccountSweeper(database: database, registry: registry, lifetime: TimeInterval($0) * 86_400, logger: logger)
            },
            logger: logger
        )
        retention = .housekeeping(
            housekeeping, clock: foundation.clock, firstRun: configuration.housekeeping.first, every: configuration.housekeeping.interval
        )
    }

    var services: [any Service] { [retention] }
}

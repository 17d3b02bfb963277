/// Periods and the cycle predicted from them: logged periods and fertility signals (REST and sync), today's phase and
/// the forecast.
struct CycleFeature: ServerFeature {
    let store: CycleStore
    let profiles: ProfileStore
    /// Rules and writes.
    let collection: PeriodsCollection
    /// Fertility signals: rules and writes (the store is `signals.store`).
    let signals: SignalsCollection
    /// The cycle position other features read (recommendations, plans, workout logs, reminders).
    let reckoner: CycleReckoner
    private let audit: AuditLog

    init(_ foundation: ServerFoundation) {
        let store = CycleStore(database: foundation.database, vault: foundation.vault)
        self.store = store
        profiles = foundation.profiles
        collection = PeriodsCollection(database: foundation.database, store: store, profiles: foundation.profiles, audit: foundation.audit)
        let signalStore = CycleSignalStore(database: foundation.database, vault: foundation.vault)
        signals = SignalsCollection(database: foundation.database, store: signalStore, profiles: foundation.profiles, audit: foundation.audit)
        reckoner = CycleReckoner(store: store, signals: signalStore, profiles: foundation.profiles)
        audit = foundation.audit
    }

    /// HealthKit's cycle samples written as signals and periods (the cycle import and the health upload).
    var healthKit: CycleHealthKitImporter { CycleHealthKitImporter(self) }

    var dataOwners: [any AccountDataOwner] { [CyclePeriodsOwner(store: store, audit: audit), CycleSignalsOwner(store: signals.store, audit: audit)] }
    var syncedCollections: [any SyncedCollection] { [collection, signals] }
}

/// Logged workouts: the history, its statistics and streaks, written by REST and sync alike.
struct HistoryFeature: ServerFeature {
    let history: HistoryStore
    /// Rules and writes.
    let collection: WorkoutLogsCollection
    let entitlements: EntitlementService
    private let audit: AuditLog

    init(_ foundation: ServerFoundation, catalog: CatalogFeature, cycle: CycleFeature, billing: BillingFeature) {
        let history = HistoryStore(database: foundation.database, vault: foundation.vault)
        self.history = history
        collection = WorkoutLogsCollection(
            database: foundation.database, store: history, catalog: catalog.store, profiles: foundation.profiles, cycle: cycle.reckoner,
            audit: foundation.audit
        )
        entitlements = billing.entitlements
        audit = foundation.audit
    }

    var dataOwners: [any AccountDataOwner] { [WorkoutLogsOwner(store: history, audit: audit)] }
    var syncedCollections: [any SyncedCollection] { [collection] }
}

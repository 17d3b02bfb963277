/// Training plans: the user's weeks of workouts, written by REST and sync, and the suggested progression.
struct PlansFeature: ServerFeature {
    let plans: PlanStore
    /// Rules and writes.
    let collection: PlansCollection
    /// Suggestions for a plan's coming week.
    let progression: PlanProgressionService

    init(_ foundation: ServerFoundation, catalog: CatalogFeature, cycle: CycleFeature, history: HistoryFeature, billing: BillingFeature) {
        let plans = PlanStore(database: foundation.database)
        self.plans = plans
        collection = PlansCollection(database: foundation.database, catalog: catalog.store, entitlements: billing.entitlements)
        progression = PlanProgressionService(
            plans: plans, history: history.history, catalog: catalog.store, profiles: foundation.profiles, cycle: cycle.reckoner,
            entitlements: billing.entitlements, audit: foundation.audit
        )
    }

    var dataOwners: [any AccountDataOwner] { [TrainingPlansOwner()] }
    var syncedCollections: [any SyncedCollection] { [collection] }
}

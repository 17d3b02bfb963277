/// Health samples: sealed under each user's data key, consent-gated, audited, summarised.
struct HealthFeature: ServerFeature {
    let records: HealthRecords
    let profiles: ProfileStore
    /// Where the cycle samples of an upload go (ovulation tests, temperatures, mucus, menstrual flow).
    let cycleSamples: CycleHealthKitImporter

    init(_ foundation: ServerFoundation, cycle: CycleFeature) {
        let database = foundation.database
        records = HealthRecords(
            database: database, store: HealthSampleStore(database: database), vault: foundation.vault, audit: foundation.audit,
            consents: ConsentStore(database: database), sampleQuota: foundation.configuration.healthSampleQuota
        )
        profiles = foundation.profiles
        cycleSamples = cycle.healthKit
    }

    var dataOwners: [any AccountDataOwner] { [HealthSamplesOwner(records: records)] }
    var syncedCollections: [any SyncedCollection] { [HealthSamplesCollection(health: records)] }
}

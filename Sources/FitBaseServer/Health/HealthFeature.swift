/// Health samples: sealed under each user's data key, consent-gated, audited, summarised.
struct HealthFeature: ServerFeature {
    let records: HealthRecords
    let profiles: ProfileStore

    init(_ foundation: ServerFoundation) {
        let database = foundation.database
        records = HealthRecords(
            database: database, store: HealthSampleStore(database: database), vault: foundation.vault, audit: foundation.audit,
            consents: ConsentStore(database: database), sampleQuota: foundation.configuration.healthSampleQuota
        )
        profiles = foundation.profiles
    }

    var dataOwners: [any AccountDataOwner] { [HealthSamplesOwner(records: records)] }
    var syncedCollections: [any SyncedCollection] { [HealthSamplesCollection(health: records)] }
}

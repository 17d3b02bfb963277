import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// Health samples as a synced collection: consent, checking and sealing, the one write path (REST batches and pushed
/// samples: rows and feed entries), deletion, and the audit of every push and pull.
struct HealthSamplesCollection: SyncedCollection {
    let health: HealthRecords

    let collection = SyncCollection.healthSamples
    let table: String? = "health_samples"
    /// A stored sample never changes: sending it again is a no-op.
    var isWrittenOnce: Bool { true }
    /// Values are sealed under the user's key: never in a stored push result.
    var isSealed: Bool { true }

    /// Stores the sealed samples not stored before (of `write`'s user), enters them into the feed, counts them against
    /// the account's `quota` (409 `quota_exceeded`, and nothing stored, past it) and adds them to their slots' totals:
    /// the write path of every sample. Returns the ids stored and their feed entries.
    static func write(
        _ batch: SealedBatch, vault: HealthVault, quota: Int, _ write: FeedWrite, on db: any SQLDatabase
    ) async throws -> (inserted: Set<HealthSampleID>, changes: [SyncChange]) {
        // The user's sequence row is taken first, as by every health write (see HealthRollups).
        let firstSeq = try await SyncFeed.reserve(batch.rows.count, of: write.user, on: db)
        let inserted = try await HealthSampleStore.insert(batch.rows, of: write.user, firstSeq: firstSeq, updatedAt: write.updatedAt, now: write.now, on: db)
        try await HealthSampleQuota.count(inserted.count, of: write.user, limit: quota, on: db)
        let revived = try await SyncFeed.entered(.healthSamples, ids: batch.rows.filter { inserted.contains($0.id) }.map(\.id.rawValue), of: write.user, now: write.now, on: db)
        let changes = batch.rows.enumerated().filter { inserted.contains($0.element.id) }.map { offset, row in
            SyncChange(
                collection: .healthSamples, recordID: row.id.description, seq: firstSeq + offset,
                stamp: RecordStamp(version: revived[row.id.rawValue] ?? 1, updatedAt: write.updatedAt, deleted: false)
            )
        }
        let additions = zip(batch.rows, batch.values).filter { inserted.contains($0.0.id) }.map { row, value in
            HealthRollups.Addition(type: row.type, start: row.start, end: row.end, value: value)
        }
        try await HealthRollups.add(additions, of: write.user, key: batch.key, vault: vault, on: db)
        return (inserted, changes)
    }

    // MARK: Sync

    /// Reads the `healthData` consent once; refused mutations are audited as denied, as REST refusals are.
    func prepare(_ mutations: [Components.Schemas.SyncMutation], reads: PushReads) async throws {
        let user = reads.user
        let consent = try await self.consent(reads)
        let refused = mutations.filter { !consent.allows(upload: $0.op == .upsert) }.count
        if refused > 0 { try await health.auditDenied(user, action: .sync, resource: .healthSamples, count: refused) }
    }

    func checkUpsert(
        _ data: Components.Schemas.SyncRecordData?, id: String, reads: PushReads, updatedAt: Date
    ) async throws -> any SyncedWrite {
        guard try await consent(reads).upload else { throw HealthConsent.required(toUpload: true) }
        let body = try decode(Components.Schemas.HealthSampleInput.self, from: data)
        var input = HealthWire.input(body)
        input.id = id
        let sample: HealthSample
        switch HealthSampleValidator.validate(input, now: reads.now) {
        case .success(let valid): sample = valid
        case .failure(let failure): throw Problem.validationFailed(failure.errors.map { .init(field: $0.field, message: $0.message) })
        }
        let user = reads.user
        guard let key = try await reads.once("health.key", { try await health.vault.dataKey(of: user, creating: true) }) else {
            throw HealthConsent.required(toUpload: true)
        }
        return HealthSampleWrite(batch: try health.seal([sample], of: user, with: key), vault: health.vault, quota: health.sampleQuota)
    }

    func checkDelete(id: String, reads: PushReads) async throws {
        guard try await consent(reads).read else { throw HealthConsent.required(toUpload: false) }
    }

    func delete(_ id: String, _ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange? {
        guard let sample = HealthSampleID(id), let deleted = try await HealthSampleStore.deleteRow(sample, of: write.user, on: db) else { return nil }
        // The row held the sample's feed entry: the tombstone takes over from its version.
        let change = try await SyncFeed.record(
            .healthSamples, id: id, of: write.user, deleted: true, updatedAt: write.updatedAt, changedAt: write.now, currentVersion: deleted.version, on: db
        )
        try await HealthRollups.markStale(type: deleted.type, start: deleted.start, of: write.user, on: db)
        try await HealthSampleQuota.count(-1, of: write.user, limit: .max, on: db)
        return change
    }

    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncRecordData] {
        let rows = try await HealthSampleStore.samples(ids.compactMap(HealthSampleID.init), of: user, on: db)
        return try await wire(health.open(rows, of: user), id: \.id.description, HealthWire.wire)
    }

    func pushed(_ count: Int, of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await AuditLog.append(AuditEvent(actor: user, subject: user, action: .sync, resource: .healthSamples, count: count), now: now, on: db, engine: health.database.engine)
    }

    func pulled(_ count: Int, of user: UserID) async throws {
        try await health.audit.append(AuditEvent(actor: user, subject: user, action: .sync, resource: .healthSamples, count: count))
    }

    /// The pushing user's consent, read once per push.
    private func consent(_ reads: PushReads) async throws -> HealthConsent {
        let user = reads.user
        return try await reads.once("health.consent") { try await health.consent(of: user) }
    }
}

/// A checked, sealed sample.
struct HealthSampleWrite: SyncedWrite {
    var batch: SealedBatch
    var vault: HealthVault
    var quota = HealthSampleQuota.defaultLimit
    /// The quota is counted after the row is written: past it the write is rolled back.
    var canViolateConstraint: Bool { true }

    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange {
        if let change = try await HealthSamplesCollection.write(batch, vault: vault, quota: quota, write, on: db).changes.first { return change }
        // Its row was there already, stored by a write the push did not see: the user's own (that row's entry), or
        // another user's who stored the id meanwhile (PostgreSQL: committed after the push read the owners).
        let id = batch.rows[0].id.description
        guard let stamp = try await SyncFeed.stamp(.healthSamples, id: id, of: write.user, on: db), !stamp.deleted else { throw RecordIDTaken() }
        return SyncChange(collection: .healthSamples, recordID: id, seq: 0, stamp: stamp)
    }
}

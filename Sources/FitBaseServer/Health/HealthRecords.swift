import FitBaseCore
import Foundation
import Crypto
import HTTPTypes
import SQLKit

/// Users' health samples: checked, sealed under the owner's data key, entered into the sync feed and audited — every
/// read, write, delete, export and sync appends to the hash-chained ``AuditLog``.
struct HealthRecords: Sendable {
    let database: Database
    let store: HealthSampleStore
    let vault: HealthVault
    let audit: AuditLog
    let consents: ConsentStore
    /// Samples one account may keep (`FITBASE_HEALTH_SAMPLE_QUOTA`).
    var sampleQuota = HealthSampleQuota.defaultLimit

    static let maximumBatch = HealthUploadBatch.maximumCount

    /// Where an upload's cycle samples go, and the user's time zone, whose days they are on.
    struct CycleSamples: Sendable {
        var importer: CycleHealthKitImporter
        var timeZone: String?
    }

    /// What became of one uploaded sample.
    struct Outcome: Sendable {
        enum Status: String, Sendable { case created, duplicate, rejected }
        var id: String
        var status: Status
        var problem: Problem?
    }

    // MARK: Consent

    /// The user's `healthData` consent.
    func consent(of user: UserID) async throws -> HealthConsent {
        HealthConsent(history: try await consents.history(of: user))
    }

    /// Throws 403 `consent_required` unless the consent allows the access; a refusal is audited (``auditDenied``).
    func requireConsent(of user: UserID, toUpload: Bool, resource: AuditResource) async throws {
        guard try await !consent(of: user).allows(upload: toUpload) else { return }
        try await auditDenied(user, action: toUpload ? .write : .read, resource: resource, count: 0)
        throw HealthConsent.required(toUpload: toUpload)
    }

    /// Enters accesses the consent refused into the user's audit chain (`count` refused records; 0 for a request).
    func auditDenied(_ user: UserID, action: AuditAction, resource: AuditResource, count: Int) async throws {
        try await audit.append(AuditEvent(actor: user, subject: user, action: action, resource: resource, count: count, outcome: .denied))
    }

    // MARK: Writing

    /// Checks every sample on its own, seals the good ones and stores those not stored before, in one transaction
    /// with their feed entries and one audit entry. A bad sample is rejected alone, its fields named `samples[i].…`.
    ///
    /// With `cycle`, HealthKit's cycle samples among them (``HealthKitCycleImport/uploadTypes``) are checked by their own
    /// rules and written as the user's fertility signals and periods in the same transaction (sending one again replaces
    /// what it made); a period that breaks a constraint fails the whole upload with its problem.
    func upload(_ inputs: [HealthSampleInput], by user: UserID, action: AuditAction = .write, now: Date, cycle: CycleSamples? = nil) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(inputs.count)
        var accepted: [(index: Int, sample: HealthSample)] = []
        var seen: Set<HealthSampleID> = []
        var cycleSamples: [HealthKitCycleImport.Sample] = []
        var seenCycleSamples: Set<UUID> = []
        for (index, input) in inputs.enumerated() {
            if let cycle, HealthKitCycleImport.uploadTypes[input.type] != nil {
                switch HealthKitCycleImport.validate(input, now: now, day: { LocalCalendar.day(of: $0, in: cycle.timeZone) }) {
                case .success(let sample):
                    let id = sample.uuid.map { $0.uuidString.lowercased() } ?? input.id
                    if let uuid = sample.uuid, seenCycleSamples.insert(uuid).inserted {
                        cycleSamples.append(sample)
                        outcomes.append(Outcome(id: id, status: .created))
                    } else {
                        outcomes.append(Outcome(id: id, status: .duplicate))
                    }
                case .failure(let failure):
                    let problem = Problem.validationFailed(failure.errors.map { .init(field: "samples[\(index)].\($0.field)", message: $0.message) })
                    outcomes.append(Outcome(id: input.id, status: .rejected, problem: problem))
                }
                continue
            }
            switch HealthSampleValidator.validate(input, now: now) {
            case .success(let sample):
                if seen.insert(sample.id).inserted {
                    accepted.append((index, sample))
                    outcomes.append(Outcome(id: sample.id.description, status: .created))
                } else {
                    outcomes.append(Outcome(id: sample.id.description, status: .duplicate))
                }
            case .failure(let failure):
                let problem = Problem.validationFailed(failure.errors.map { .init(field: "samples[\(index)].\($0.field)", message: $0.message) })
                outcomes.append(Outcome(id: input.id, status: .rejected, problem: problem))
            }
        }
        let engine = database.engine
        let cycleWrites: CycleHealthKitImporter.Prepared? =
            if let cycle, !cycleSamples.isEmpty {
                try await cycle.importer.prepare(cycleSamples, of: user, today: LocalCalendar.day(of: now, in: cycle.timeZone), now: now)
            } else {
                nil
            }
        guard !accepted.isEmpty, let key = try await vault.dataKey(of: user, creating: true) else {
            if let cycleWrites, !cycleWrites.isEmpty {
                do {
                    try await database.transaction { db in try await cycleWrites.write(on: db, engine: engine) }
                } catch {
                    throw cycleWrites.problem(forViolation: error) ?? error
                }
            }
            return outcomes
        }
        let batch = try seal(accepted.map(\.sample), of: user, with: key)
        let vault = self.vault
        let quota = sampleQuota
        let (taken, inserted): (Set<HealthSampleID>, Set<HealthSampleID>)
        do {
            (taken, inserted) = try await database.transaction { db in
                try await cycleWrites?.write(on: db, engine: engine)
                // A row whose id is stored already is not inserted; of those, the ones another user holds are refused.
                let inserted = try await HealthSamplesCollection.write(batch, vault: vault, quota: quota, .rest(user, now), on: db).inserted
                let taken = try await HealthSampleStore.takenByOthers(batch.rows.map(\.id).filter { !inserted.contains($0) }, user: user, on: db)
                try await AuditLog.append(AuditEvent(actor: user, subject: user, action: action, resource: .healthSamples, count: inserted.count), now: now, on: db, engine: engine)
                return (taken, inserted)
            }
        } catch {
            throw cycleWrites?.problem(forViolation: error) ?? error
        }
        // Outcomes are in input order, one per sample.
        for (index, sample) in accepted {
            if taken.contains(sample.id) {
                outcomes[index] = Outcome(
                    id: outcomes[index].id, status: .rejected,
                    problem: RecordIDTaken(field: "samples[\(index)].id", detail: "samples[\(index)].id is in use by a sample that is not yours.").problem
                )
            } else if !inserted.contains(sample.id) {
                outcomes[index].status = .duplicate
            }
        }
        return outcomes
    }

    /// Deletes one of the user's samples (a tombstone enters the feed); whether it was there.
    func delete(_ id: HealthSampleID, of user: UserID, action: AuditAction = .delete, now: Date) async throws -> Bool {
        let engine = database.engine
        return try await database.transaction { db in
            let deleted = try await HealthSamplesCollection(health: self).delete(id.description, .rest(user, now), on: db) != nil
            try await AuditLog.append(AuditEvent(actor: user, subject: user, action: action, resource: .healthSamples, count: deleted ? 1 : 0), now: now, on: db, engine: engine)
            return deleted
        }
    }

    /// Samples sealed under the user's data key, ready to store.
    func seal(_ samples: [HealthSample], of user: UserID, with key: HealthVault.DataKey) throws -> SealedBatch {
        let nonces = try HealthVault.nonces(samples.count)
        return SealedBatch(key: key, rows: try zip(samples, nonces).map { try seal($0, of: user, with: key, nonce: $1) }, values: samples.map(\.value))
    }

    /// The row a sample is stored as: its clear fields and the rest sealed under the user's data key.
    private func seal(_ sample: HealthSample, of user: UserID, with key: HealthVault.DataKey, nonce: AES.GCM.Nonce) throws -> SealedSample {
        SealedSample(
            id: sample.id, type: sample.type, start: sample.start, end: sample.end, keyID: key.id,
            sealed: try vault.seal(
                HealthSampleCodec.encode(sample), with: key,
                binding: SealedSample.binding(user: user, id: sample.id, type: sample.type, start: sample.start, end: sample.end), nonce: nonce
            )
        )
    }

    // MARK: Reading

    /// A page of the user's samples, opened, and audited as a read.
    func samples(of user: UserID, type: HealthSampleType?, from: Date?, to: Date?, offset: Int, limit: Int) async throws -> [HealthSample] {
        let rows = try await store.samples(of: user, type: type, from: from, to: to, offset: offset, limit: limit)
        let samples = try await open(rows, of: user)
        try await audit.append(AuditEvent(actor: user, subject: user, action: .read, resource: .healthSamples, count: samples.count))
        return samples
    }

    /// Buckets of the user's samples of `type` in their time zone, audited as a read of every sample used.
    ///
    /// Samples that count by their start come from their slots' totals (``HealthRollups``) wherever the buckets hold
    /// whole slots, and one by one elsewhere (the range's partial slots); steps over an interval and sleep are always
    /// read one by one.
    func summary(
        of user: UserID, type: HealthSampleType, from: Date, to: Date, bucket: HealthSummaryBucketSize, timeZone: TimeZone
    ) async throws -> [HealthSummaryBucket] {
        var buckets: [HealthSummaryBucket] = []
        var used = 0
        if from < to, let key = try await vault.dataKey(of: user, creating: false) {
            (buckets, used) = try await summary(of: user, type: type, from: from, to: to, bucket: bucket, timeZone: timeZone, key: key)
        }
        try await audit.append(AuditEvent(actor: user, subject: user, action: .read, resource: .healthSummary, count: used))
        return buckets
    }

    /// Every type's buckets (as ``summary(of:type:from:to:bucket:timeZone:)`` makes them, in `HealthSampleType` order)
    /// and each type's newest sample, audited as one read of the summaries and one of the newest samples.
    func overview(
        of user: UserID, from: Date, to: Date, bucket: HealthSummaryBucketSize, timeZone: TimeZone
    ) async throws -> (summaries: [(type: HealthSampleType, buckets: [HealthSummaryBucket])], latest: [HealthSample]) {
        var summaries: [(type: HealthSampleType, buckets: [HealthSummaryBucket])] = []
        var latest: [HealthSample] = []
        var used = 0
        let key = try await vault.dataKey(of: user, creating: false)
        for type in HealthSampleType.allCases {
            guard let key, from < to else {
                summaries.append((type, []))
                continue
            }
            let (buckets, count) = try await summary(of: user, type: type, from: from, to: to, bucket: bucket, timeZone: timeZone, key: key)
            summaries.append((type, buckets))
            used += count
            // Rows sealed under an earlier key were crypto-shredded: unreadable by design, left out as ``open(_:of:)`` does.
            let newest = try await store.samples(of: user, type: type, from: nil, to: nil, offset: 0, limit: 1)
            latest += try newest.filter { $0.keyID == key.id }.map { try open($0, of: user, with: key) }
        }
        try await audit.append(AuditEvent(actor: user, subject: user, action: .read, resource: .healthSummary, count: used))
        try await audit.append(AuditEvent(actor: user, subject: user, action: .read, resource: .healthSamples, count: latest.count))
        return (summaries, latest)
    }

    /// The buckets of one type under the user's data key, and how many samples they were made of (not audited).
    private func summary(
        of user: UserID, type: HealthSampleType, from: Date, to: Date, bucket: HealthSummaryBucketSize, timeZone: TimeZone, key: HealthVault.DataKey
    ) async throws -> (buckets: [HealthSummaryBucket], used: Int) {
        if type == .sleep {
            let samples = try await openValues(try await store.samples(of: user, type: type, keyID: key.id, overlapping: from, to), of: user, with: key)
            return (HealthSummarizer.summarize(samples, type: type, bucket: bucket, timeZone: timeZone, from: from, to: to), samples.count)
        }
        try await rollups.repair(user, type: type, key: key, vault: vault)
        let plan = HealthSummarizer.plan(bucket: bucket, timeZone: timeZone, from: from, to: to)
        let totals = try await rollups.totals(of: user, type: type, slots: plan.slots, key: key, vault: vault)
        var rows: [HealthSampleID: SealedSample] = [:]
        for range in plan.sampleRanges {
            for row in try await store.samples(of: user, type: type, keyID: key.id, startingIn: range.lower..<range.upper) { rows[row.id] = row }
        }
        if type == .steps {
            for row in try await store.intervals(of: user, type: type, keyID: key.id, overlapping: from, to) { rows[row.id] = row }
        }
        let samples = try await openValues(Array(rows.values), of: user, with: key)
        let buckets = HealthSummarizer.summarize(samples, slotTotals: totals, type: type, bucket: bucket, timeZone: timeZone, from: from, to: to)
        return (buckets, samples.count + totals.filter { plan.usesTotals(of: $0.key) }.values.reduce(0) { $0 + $1.sampleCount })
    }

    var rollups: HealthRollups {
        HealthRollups(database: database)
    }

    /// Opens sealed rows of `user`. Rows sealed under a key that is no longer the user's were crypto-shredded (an
    /// account deletion that destroyed the key but did not complete): they are unreadable by design and left out.
    func open(_ rows: [SealedSample], of user: UserID) async throws -> [HealthSample] {
        guard !rows.isEmpty, let key = try await vault.dataKey(of: user, creating: false) else { return [] }
        return try rows.filter { $0.keyID == key.id }.map { row in try open(row, of: user, with: key) }
    }

    /// Opens many rows for their values only (source, device and metadata left empty), on every core.
    func openValues(_ rows: [SealedSample], of user: UserID, with key: HealthVault.DataKey) async throws -> [HealthSample] {
        let vault = self.vault
        let chunk = max(4_096, rows.count / ProcessInfo.processInfo.activeProcessorCount + 1)
        return try await withThrowingTaskGroup(of: (Int, [HealthSample]).self) { group in
            for start in stride(from: 0, to: rows.count, by: chunk) {
                let slice = rows[start..<min(start + chunk, rows.count)]
                group.addTask {
                    let opened = try slice.map { row in
                        let plain = try vault.open(row.sealed, with: key, binding: SealedSample.binding(user: user, id: row.id, type: row.type, start: row.start, end: row.end))
                        return HealthSample(id: row.id, value: try HealthSampleCodec.decodeValue(plain), start: row.start, end: row.end, sourceId: "")
                    }
                    return (start, opened)
                }
            }
            var parts: [(Int, [HealthSample])] = []
            for try await part in group { parts.append(part) }
            return parts.sorted { $0.0 < $1.0 }.flatMap(\.1)
        }
    }

    func open(_ row: SealedSample, of user: UserID, with key: HealthVault.DataKey) throws -> HealthSample {
        guard row.keyID == key.id else { throw HealthRecordsError.unknownKey(row.keyID) }
        let plain = try vault.open(row.sealed, with: key, binding: SealedSample.binding(user: user, id: row.id, type: row.type, start: row.start, end: row.end))
        let sealed = try HealthSampleCodec.decode(plain)
        return HealthSample(id: row.id, value: sealed.value, start: row.start, end: row.end, sourceId: sealed.sourceID, device: sealed.device, metadata: sealed.metadata)
    }
}

/// Samples sealed for storing under one user's data key, with their values (in memory only, for the slot totals).
struct SealedBatch: Sendable {
    var key: HealthVault.DataKey
    var rows: [SealedSample]
    /// The values of `rows`, in the same order.
    var values: [HealthValue]

    /// The samples whose ids pass `isIncluded`.
    func filter(_ isIncluded: (HealthSampleID) -> Bool) -> SealedBatch {
        let kept = zip(rows, values).filter { isIncluded($0.0.id) }
        return SealedBatch(key: key, rows: kept.map(\.0), values: kept.map(\.1))
    }
}

enum HealthRecordsError: Error, CustomStringConvertible {
    case unknownKey(String)

    var description: String {
        switch self {
        case .unknownKey(let id): "a sample is sealed under data key \(id), which is not the user's key"
        }
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import SQLKit

/// Fertility signals as a synced collection (`cycleSignals`): the rules of a signal, its one write path (REST and push)
/// and how the feed shows it.
struct SignalsCollection: AuditedCollection {
    let database: Database
    let store: CycleSignalStore
    let profiles: ProfileStore
    let audit: AuditLog

    let collection = SyncCollection.cycleSignals
    let table: String? = CycleSignalStore.table
    /// Signals are sealed under the user's key: never in a stored push result.
    var isSealed: Bool { true }

    /// The audit log's name for signals.
    static let resource = AuditResource.cycleSignals

    // MARK: REST

    /// Inserts `signal` of `user`, audited; 409 `too_many_signals` past the account's limit.
    func save(_ signal: FertilitySignal, of user: UserID, now: Date) async throws {
        let write = SignalWrite(signal: signal, row: try await store.sealed(signal, of: user))
        _ = try await audited(.write, by: user, now: now) { db in try await write.write(.created(user, now), on: db) }
    }

    /// Deletes the signal if it is the user's (a tombstone enters the feed); whether it was there.
    func delete(_ id: FertilitySignalID, of user: UserID, now: Date) async throws -> Bool {
        try await auditedDelete(id.description, of: user, now: now)
    }

    // MARK: Sync

    func checkUpsert(
        _ data: Components.Schemas.SyncRecordData?, id: String, reads: PushReads, updatedAt: Date
    ) async throws -> any SyncedWrite {
        let body = try decode(Components.Schemas.FertilitySignalInput.self, from: data)
        do {
            let signal = try await validated(body, id: FertilitySignalID(id) ?? FertilitySignalID(), user: reads.user, now: reads.now, profile: try await profiles.profile(reads))
            return SignalWrite(signal: signal, row: try await store.sealed(signal, of: reads.user))
        } catch let invalid as InvalidFields {
            throw Problem.validationFailed(invalid)
        }
    }

    func delete(_ id: String, _ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange? {
        guard let signal = FertilitySignalID(id), try await CycleSignalStore.deleteRow(signal, of: write.user, on: db) else { return nil }
        return try await write.record(.cycleSignals, id: id, deleted: true, on: db)
    }

    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncRecordData] {
        try await wire(store.signals(ids.compactMap(FertilitySignalID.init), of: user, on: db), id: \.id.description, CycleWire.wire)
    }

    // MARK: Rules

    /// The signal a `FertilitySignalInput` describes (``FertilitySignalRules``), its date checked against today in the
    /// user's time zone; throws ``InvalidFields`` with every broken rule.
    func validated(_ body: Components.Schemas.FertilitySignalInput, id: FertilitySignalID, user: UserID, now: Date, profile: Profile? = nil) async throws -> FertilitySignal {
        let profile = if let profile { profile } else { try await profiles.profile(of: user) }
        let draft = FertilitySignalDraft(date: body.date, type: body._type.rawValue, result: body.result, value: body.value, unit: body.unit?.rawValue)
        return try FertilitySignalRules.checked(draft, id: id, today: LocalCalendar.day(of: now, in: profile.timeZone))
    }
}

/// A checked signal, sealed: its row and its feed entry, within the account's limit.
struct SignalWrite: SyncedWrite {
    var signal: FertilitySignal
    var row: SealedFields

    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange {
        try await CycleSignalStore.upsert(signal.id, row, of: write.user, now: write.updatedAt, on: db)
        let change = try await write.record(.cycleSignals, id: signal.id.description, deleted: false, on: db)
        // Counted after the feed entry, which holds the user's feed row: concurrent writes of one user take turns here.
        if try await CycleSignalStore.count(of: write.user, on: db) > CycleSignalStore.maximumSignals {
            throw Problem(.conflict, code: .tooManySignals, detail: "An account holds at most \(CycleSignalStore.maximumSignals) fertility signals; delete some first.")
        }
        return change
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// Logged periods as a synced collection (`cycleLogs`): the rules of a period, its one write path (REST and push) and
/// how the feed shows it.
struct PeriodsCollection: AuditedCollection {
    let database: Database
    let store: CycleStore
    let profiles: ProfileStore
    let audit: AuditLog

    let collection = SyncCollection.cycleLogs
    let table: String? = "cycle_periods"
    /// Periods are sealed under the user's key: never in a stored push result.
    var isSealed: Bool { true }

    // MARK: REST

    /// Inserts or replaces `period` of `user`; 409 `period_exists` when another period starts the same day.
    func save(_ period: Period, of user: UserID, now: Date) async throws {
        let write = PeriodWrite(period: period, row: try await store.sealed(period, of: user))
        do {
            _ = try await audited(.write, by: user, now: now) { db in try await write.write(.rest(user, now), on: db) }
        } catch {
            throw write.problem(forViolation: error) ?? error
        }
    }

    /// Deletes the period if it is the user's (a tombstone enters the feed); whether it was there.
    func delete(_ id: PeriodID, of user: UserID, now: Date) async throws -> Bool {
        try await auditedDelete(id.description, of: user, now: now)
    }

    /// The audit log's name for periods.
    static let resource = AuditResource.cyclePeriods

    // MARK: Sync

    func checkUpsert(
        _ data: Components.Schemas.SyncRecordData?, id: String, reads: PushReads, updatedAt: Date
    ) async throws -> any SyncedWrite {
        let body = try decode(Components.Schemas.PeriodInput.self, from: data)
        do {
            let period = try await validated(body, id: PeriodID(id) ?? PeriodID(), user: reads.user, now: reads.now, profile: try await profiles.profile(reads))
            return PeriodWrite(period: period, row: try await store.sealed(period, of: reads.user))
        } catch let invalid as InvalidFields {
            throw Problem.validationFailed(invalid)
        }
    }

    func delete(_ id: String, _ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange? {
        guard let period = PeriodID(id), try await CycleStore.deleteRow(period, of: write.user, on: db) else { return nil }
        return try await write.record(.cycleLogs, id: id, deleted: true, on: db)
    }

    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncRecordData] {
        try await wire(store.periods(ids.compactMap(PeriodID.init), of: user, on: db), id: \.id.description, CycleWire.wire)
    }

    // MARK: Rules

    /// The period a `PeriodInput` describes (``PeriodRules``), its dates checked against today in the user's time zone;
    /// throws ``InvalidFields`` with every broken rule. Today is the day `now` falls on in the user's time zone.
    func validated(_ body: Components.Schemas.PeriodInput, id: PeriodID, user: UserID, now: Date, profile: Profile? = nil) async throws -> Period {
        let profile = if let profile { profile } else { try await profiles.profile(of: user) }
        return try PeriodRules.checked(PeriodDraft(body), id: id, today: LocalCalendar.day(of: now, in: profile.timeZone))
    }
}

extension PeriodDraft {
    /// The draft of a REST body or pushed mutation.
    init(_ body: Components.Schemas.PeriodInput) {
        self.init(startDate: body.startDate, endDate: body.endDate, flow: body.flow?.rawValue, symptoms: body.symptoms, notes: body.notes)
    }
}

/// A checked period, sealed: its row and its feed entry. Another period of the user starting the same day violates a
/// unique index (on the blind index of the day): 409 `period_exists`.
struct PeriodWrite: SyncedWrite {
    var period: Period
    var row: SealedPeriod

    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange {
        try await CycleStore.upsert(row, of: write.user, now: write.updatedAt, on: db)
        let change = try await write.record(.cycleLogs, id: period.id.description, deleted: false, on: db)
        // Counted after the feed entry, which holds the user's feed row: concurrent writes of one user take turns here.
        if try await CycleStore.count(of: write.user, on: db) > CycleStore.maximumPeriods {
            throw Problem(.conflict, code: .tooManyPeriods, detail: "An account holds at most \(CycleStore.maximumPeriods) periods; delete some first.")
        }
        return change
    }

    var canViolateConstraint: Bool { true }

    func problem(forViolation error: any Error) -> Problem? {
        Database.isUniqueViolation(error)
            ? Problem(.conflict, code: .periodExists, detail: "Another period of yours starts that day.") : nil
    }
}

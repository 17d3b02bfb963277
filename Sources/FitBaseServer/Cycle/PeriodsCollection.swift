import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// Logged periods as a synced collection (`cycleLogs`): the rules of a period, its one write path (REST and push) and
/// how the feed shows it.
struct PeriodsCollection: SyncedCollection {
    let database: Database
    let profiles: ProfileStore

    let collection = SyncCollection.cycleLogs
    let table: String? = "cycle_periods"

    // MARK: REST

    /// Inserts or replaces `period` of `user`; 409 `period_exists` when another period starts the same day.
    func save(_ period: LoggedPeriod, of user: UserID, now: Date) async throws {
        let write = PeriodWrite(period: period)
        do {
            _ = try await database.transaction { db in try await write.write(.now(user, now), on: db) }
        } catch {
            throw write.problem(forViolation: error) ?? error
        }
    }

    /// Deletes the period if it is the user's (a tombstone enters the feed); whether it was there.
    func delete(_ id: PeriodID, of user: UserID, now: Date) async throws -> Bool {
        try await delete(id.description, of: user, now: now, in: database)
    }

    // MARK: Sync

    func checkUpsert(
        _ data: Components.Schemas.SyncRecordData?, id: String, reads: PushReads, updatedAt: Date
    ) async throws -> any SyncedWrite {
        let body = try decode(Components.Schemas.PeriodInput.self, from: data)
        do {
            let period = try await validated(body, id: PeriodID(id) ?? PeriodID(), user: reads.user, profile: try await profiles.profile(reads))
            return PeriodWrite(period: period)
        } catch let invalid as InvalidFields {
            throw Problem.validationFailed(invalid)
        }
    }

    func delete(_ id: String, _ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange? {
        guard let period = PeriodID(id), try await CycleStore.deleteRow(period, of: write.user, on: db) else { return nil }
        return try await write.record(.cycleLogs, id: id, deleted: true, on: db)
    }

    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncRecordData] {
        try wire(try await CycleStore.periods(ids.compactMap(PeriodID.init), of: user, on: db), id: \.id.description, CycleController.wire)
    }

    // MARK: Rules

    /// The period a `PeriodInput` describes (``PeriodRules``), its dates checked against today in the user's time zone;
    /// throws ``InvalidFields`` with every broken rule.
    func validated(_ body: Components.Schemas.PeriodInput, id: PeriodID, user: UserID, profile: Profile? = nil) async throws -> LoggedPeriod {
        let profile = if let profile { profile } else { try await profiles.profile(of: user) }
        return try PeriodRules.checked(PeriodDraft(body), id: id, today: LocalCalendar.today(in: profile.timeZone))
    }
}

extension PeriodDraft {
    /// The draft of a REST body or pushed mutation.
    init(_ body: Components.Schemas.PeriodInput) {
        self.init(startDate: body.startDate, endDate: body.endDate, flow: body.flow?.rawValue, symptoms: body.symptoms, notes: body.notes)
    }
}

/// A checked period: its row and its feed entry. Another period of the user starting the same day violates a
/// unique index: 409 `period_exists`.
struct PeriodWrite: SyncedWrite {
    var period: LoggedPeriod

    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange {
        try await CycleStore.upsert(period, of: write.user, now: write.updatedAt, on: db)
        return try await write.record(.cycleLogs, id: period.id.description, deleted: false, on: db)
    }

    var canViolateConstraint: Bool { true }

    func problem(forViolation error: any Error) -> Problem? {
        Database.isUniqueViolation(error)
            ? Problem(.conflict, code: .periodExists, detail: "A period starting \(period.start) is already logged.") : nil
    }
}

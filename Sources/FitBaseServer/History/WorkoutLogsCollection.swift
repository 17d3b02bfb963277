import FitBaseAPI
import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// Workout logs as a synced collection: the rules of a log, its one write path (REST and push) with its effects — the
/// feed entry and challenge scoring — and how the feed shows it.
struct WorkoutLogsCollection: AuditedCollection {
    let database: Database
    let store: HistoryStore
    let catalog: CatalogStore
    let profiles: ProfileStore
    let cycle: CycleReckoner
    let audit: AuditLog

    let collection = SyncCollection.workoutLogs
    let table: String? = "workout_logs"
    /// The private fields are sealed under the user's key: never in a stored push result.
    var isSealed: Bool { true }

    // MARK: REST

    /// Adds a workout logged over REST, under the id the server has just generated for it (so there is no feed entry
    /// to read), with its effects; returns the group whose leaderboards changed, if any.
    @discardableResult
    func save(_ log: WorkoutLog, of user: UserID, now: Date) async throws -> GroupID? {
        let write = WorkoutLogWrite(log: log, sealed: try await store.sealed(log, of: user))
        return try await audited(.write, by: user, now: now) { db in try await write.saved(.created(user, now), on: db).group }
    }

    /// Deletes a log with its effects; whether it was there.
    func delete(_ id: WorkoutLogID, of user: UserID, now: Date) async throws -> Bool {
        try await auditedDelete(id.description, of: user, now: now)
    }

    /// The audit log's name for workout logs (their private fields are what it watches).
    static let resource = AuditResource.workoutLogs


    // MARK: Sync

    func checkUpsert(
        _ data: Components.Schemas.SyncRecordData?, id: String, reads: PushReads, updatedAt: Date
    ) async throws -> any SyncedWrite {
        let body = try decode(Components.Schemas.WorkoutLogInput.self, from: data)
        do {
            let log = try await validated(
                body, id: WorkoutLogID(id) ?? WorkoutLogID(), user: reads.user, now: reads.now, profile: try await profiles.profile(reads),
                periods: try await cycle.store.periods(reads), signals: try await cycle.signals.signals(reads),
                workouts: try await CatalogLookup.shared(by: reads, store: catalog)
            )
            return WorkoutLogWrite(log: log, sealed: try await store.sealed(log, of: reads.user))
        } catch let invalid as InvalidFields {
            throw Problem.validationFailed(invalid)
        }
    }

    /// Deletes the row, enters the tombstone and takes the workout back out of every challenge it counted in.
    func delete(_ id: String, _ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange? {
        guard let log = WorkoutLogID(id), try await HistoryStore.deleteRow(log, of: write.user, on: db) else { return nil }
        let change = try await write.record(.workoutLogs, id: id, deleted: true, on: db)
        try await ChallengeScoring.removed(log, of: write.user, now: write.now, on: db)
        return change
    }

    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncRecordData] {
        try await wire(store.logs(ids.compactMap(WorkoutLogID.init), of: user, on: db), id: \.id.description, HistoryWire.wire)
    }

    // MARK: Rules

    /// The log a `WorkoutLogInput` describes (``WorkoutLogRules``), with the local day in the user's time zone and the
    /// cycle position on that day fixed; throws ``InvalidFields`` with every broken rule. A caller validating many logs
    /// passes the profile, periods, signals and catalog lookup it has read once. `now` is the write's time.
    func validated(
        _ body: Components.Schemas.WorkoutLogInput, id: WorkoutLogID, user: UserID, now: Date, profile: Profile? = nil, periods: [Period]? = nil,
        signals: [FertilitySignal]? = nil, workouts: CatalogLookup? = nil
    ) async throws -> WorkoutLog {
        let draft = WorkoutLogDraft(body)
        let workouts = workouts ?? CatalogLookup(store: catalog)
        let workout: CatalogWorkout? = if let id = draft.workoutID { try await workouts.workout(id) } else { nil }
        let checked = try WorkoutLogRules.checked(draft, workout: workout, now: now)
        let profile = if let profile { profile } else { try await profiles.profile(of: user) }
        let localDate = LocalCalendar.day(of: draft.completedAt, in: profile.timeZone)
        let position = try await cycle.prediction(for: user, on: localDate, profile: profile, periods: periods, signals: signals)?.today
        return checked.log(id: id, localDate: localDate, cycle: position)
    }
}

extension WorkoutLogDraft {
    /// The draft of a REST body or pushed mutation.
    init(_ body: Components.Schemas.WorkoutLogInput) {
        self.init(
            workoutId: body.workoutId, completedAt: body.completedAt, duration: body.duration, rating: body.rating,
            energyBefore: body.energyBefore, energyAfter: body.energyAfter, notes: body.notes
        )
    }
}

/// A checked workout log: its row, its feed entry, then its challenge scores — for REST and push alike.
struct WorkoutLogWrite: SyncedWrite {
    var log: WorkoutLog
    /// Its private fields, sealed.
    var sealed: SealedFields

    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange {
        try await saved(write, on: db).change
    }

    /// Writes the log with its effects; returns its feed entry and the group whose leaderboards changed.
    func saved(_ write: FeedWrite, on db: any SQLDatabase) async throws -> (change: SyncChange, group: GroupID?) {
        try await HistoryStore.upsert(log, sealed: sealed, of: write.user, now: write.now, on: db)
        let change = try await write.record(.workoutLogs, id: log.id.description, deleted: false, on: db)
        let group = try await ChallengeScoring.logged(log, of: write.user, now: write.now, on: db)
        return (change, group)
    }
}

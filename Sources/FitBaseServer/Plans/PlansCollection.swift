import FitBaseAPI
import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// Training plans as a synced collection: the rules of a plan, its one write path (REST and push) and how the feed
/// shows it.
struct PlansCollection: SyncedCollection {
    let database: Database
    let catalog: CatalogStore
    let entitlements: EntitlementService

    let collection = SyncCollection.plans
    let table: String? = "training_plans"

    /// Every tier may keep this many plans; more are the `customPlans` feature.
    static let plansWithoutCustomPlans = 1

    func checkUpsert(
        _ data: Components.Schemas.SyncMutation.DataPayload?, id: String, reads: PushReads, updatedAt: Date
    ) async throws -> any SyncedWrite {
        let body = try decode(Components.Schemas.PlanInput.self, from: data)
        let workouts = try await CatalogLookup.shared(by: reads, store: catalog)
        let plan = try await validated(body, id: PlanID(id) ?? PlanID(), now: updatedAt, workouts: workouts)
        let caller = reads.caller
        let limit = try await reads.once("plans.limit") { try await self.limit(for: caller) }
        return PlanWrite(plan: plan, limit: limit)
    }

    // MARK: REST

    /// Adds a new plan of `caller`; a plan beyond their tier's is refused with its 402 (counted in the transaction).
    func create(_ plan: TrainingPlan, by caller: Caller) async throws -> TrainingPlan {
        let write = PlanWrite(plan: plan, limit: try await limit(for: caller))
        return try await database.transaction { db in try await write.saved(.now(caller.user, plan.updatedAt), on: db).plan }
    }

    /// Replaces the plan if it is the user's, bumping its version; `nil` when there is no such plan of theirs.
    func replace(_ plan: TrainingPlan, of user: UserID, now: Date) async throws -> TrainingPlan? {
        try await database.transaction { db in
            guard try await PlanStore.exists(plan.id, of: user, on: db) else { return nil }
            return try await PlanWrite(plan: plan).saved(.now(user, now), on: db).plan
        }
    }

    /// Deletes the plan if it is the user's (a tombstone enters the feed); whether it was there.
    func delete(_ id: PlanID, of user: UserID, now: Date) async throws -> Bool {
        try await delete(id.description, of: user, now: now, in: database)
    }

    // MARK: Sync

    func delete(_ id: String, _ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange? {
        guard let plan = PlanID(id), try await PlanStore.deleteRow(plan, of: write.user, on: db) else { return nil }
        return try await write.record(.plans, id: id, deleted: true, on: db)
    }

    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: OpenAPIObjectContainer] {
        try wire(try await PlanStore.plans(ids.compactMap(PlanID.init), of: user, on: db), id: \.id.description, PlanController.wire)
    }

    /// How many plans `caller` may keep, with the problem for one more; `nil` when their tier keeps any number.
    func limit(for caller: Caller) async throws -> PlanWrite.Limit? {
        guard try await !entitlements.allows(.customPlans, caller: caller) else { return nil }
        return PlanWrite.Limit(
            plans: Self.plansWithoutCustomPlans,
            problem: EntitlementService.upgradeRequired(
                .customPlans, tier: entitlements.catalog.tierFeatures.requiredTier(for: .customPlans),
                doing: "Keeping more than \(Self.plansWithoutCustomPlans) plan"
            )
        )
    }

    /// The plan a `PlanInput` describes; every invalid field (and workout not in the catalog) is reported at once.
    func validated(_ body: Components.Schemas.PlanInput, id: PlanID, now: Date, workouts: CatalogLookup? = nil) async throws -> TrainingPlan {
        let workouts = workouts ?? CatalogLookup(store: catalog)
        var errors: [Problem.FieldError] = []
        let name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty || name.count > 200 { errors.append(.init(field: "name", message: "must be 1–200 characters")) }
        let start = CalendarDay(body.startDate)
        if start == nil { errors.append(.init(field: "startDate", message: "must be a date written YYYY-MM-DD")) }
        let end = body.endDate.flatMap(CalendarDay.init)
        if body.endDate != nil && end == nil { errors.append(.init(field: "endDate", message: "must be a date written YYYY-MM-DD")) }
        if let start, let end, end < start { errors.append(.init(field: "endDate", message: "must not be before startDate")) }
        if !(1...7).contains(body.daysPerWeek) { errors.append(.init(field: "daysPerWeek", message: "must be between 1 and 7")) }
        var referenced: [(field: String, id: String)] = []
        for (weekIndex, week) in body.weeklyWorkouts.enumerated() {
            if week.week != weekIndex + 1 { errors.append(.init(field: "weeklyWorkouts[\(weekIndex)].week", message: "must be \(weekIndex + 1): weeks are numbered from 1 in order")) }
            for (dayIndex, day) in week.days.enumerated() {
                let path = "weeklyWorkouts[\(weekIndex)].days[\(dayIndex)]"
                if !(1...7).contains(day.day) { errors.append(.init(field: "\(path).day", message: "must be 1 (Monday) to 7 (Sunday)")) }
                referenced += day.workoutIds.enumerated().map { ("\(path).workoutIds[\($0.offset)]", $0.element) }
            }
        }
        for (field, text) in referenced {
            guard let workout = WorkoutID(text), try await workouts.workout(workout) != nil else {
                errors.append(.init(field: field, message: "is not a workout of the catalog"))
                continue
            }
        }
        guard let start, errors.isEmpty else { throw Problem.validationFailed(errors) }
        return TrainingPlan(
            id: id, name: name, notes: body.notes, startDate: start, endDate: end, daysPerWeek: body.daysPerWeek,
            isCompleted: body.isCompleted ?? false,
            weeklyWorkouts: body.weeklyWorkouts.map { week in
                .init(week: week.week, days: week.days.map { .init(day: $0.day, workoutIds: $0.workoutIds.compactMap { WorkoutID($0)?.description }) })
            },
            version: 1, createdAt: now, updatedAt: now
        )
    }
}

/// A checked plan: written whole, its version the feed's, `createdAt` kept when it replaces one.
struct PlanWrite: SyncedWrite {
    /// How many plans the writer's tier keeps, and the problem for one more.
    struct Limit: Sendable {
        var plans: Int
        var problem: Problem
    }

    var plan: TrainingPlan
    var limit: Limit? = nil

    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange {
        try await saved(write, on: db).change
    }

    /// Writes the plan and returns it as stored, with its feed entry.
    func saved(_ write: FeedWrite, on db: any SQLDatabase) async throws -> (plan: TrainingPlan, change: SyncChange) {
        if let limit {
            // Holding the user's feed row first makes two concurrent creations count one after the other.
            try await SyncFeed.lockSequence(of: write.user, on: db)
            let stamp = try await SyncFeed.stamp(.plans, id: plan.id.description, of: write.user, on: db)
            if stamp.map(\.deleted) ?? true, try await PlanStore.count(of: write.user, on: db) >= limit.plans { throw limit.problem }
        }
        let change = try await write.record(.plans, id: plan.id.description, deleted: false, on: db)
        var saved = plan
        saved.version = change.stamp.version
        saved.updatedAt = write.updatedAt
        saved.createdAt = try await PlanStore.upsert(saved, of: write.user, on: db)
        return (saved, change)
    }
}

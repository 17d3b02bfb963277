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

    func checkUpsert(
        _ data: Components.Schemas.SyncRecordData?, id: String, reads: PushReads, updatedAt: Date
    ) async throws -> any SyncedWrite {
        let body = try decode(Components.Schemas.PlanInput.self, from: data)
        let workouts = try await CatalogLookup.shared(by: reads, store: catalog)
        let plan: TrainingPlan
        do {
            plan = try await validated(body, id: PlanID(id) ?? PlanID(), workouts: workouts)
        } catch let invalid as InvalidFields {
            throw Problem.validationFailed(invalid)
        }
        let caller = reads.caller
        let limit = try await reads.once("plans.limit") { try await self.limit(for: caller) }
        return PlanWrite(plan: plan, limit: limit)
    }

    // MARK: REST

    /// Adds a new plan of `caller`; a plan beyond their tier's is refused with its 402 (counted in the transaction).
    func create(_ plan: TrainingPlan, by caller: Caller, now: Date) async throws -> StoredPlan {
        let write = PlanWrite(plan: plan, limit: try await limit(for: caller))
        return try await database.transaction { db in try await write.saved(.rest(caller.user, now), on: db).plan }
    }

    /// Replaces the plan if it is the user's, bumping its version; `nil` when there is no such plan of theirs.
    func replace(_ plan: TrainingPlan, of user: UserID, now: Date) async throws -> StoredPlan? {
        try await database.transaction { db in
            guard try await PlanStore.exists(plan.id, of: user, on: db) else { return nil }
            return try await PlanWrite(plan: plan).saved(.rest(user, now), on: db).plan
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

    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncRecordData] {
        try await wire(PlanStore.plans(ids.compactMap(PlanID.init), of: user, on: db), id: \.plan.id.description, PlanWire.wire)
    }

    /// How many plans `caller` may keep, with the problem for one more; `nil` when their tier keeps any number.
    func limit(for caller: Caller) async throws -> PlanWrite.Limit? {
        guard try await !entitlements.allows(.customPlans, caller: caller) else { return nil }
        return PlanWrite.Limit(
            problem: EntitlementService.upgradeRequired(
                .customPlans, tier: entitlements.catalog.tierFeatures.requiredTier(for: .customPlans),
                doing: "Keeping more than \(PlanRules.plansWithoutCustomPlans) plan"
            )
        )
    }

    /// The plan a `PlanInput` describes (``PlanRules``); throws ``InvalidFields`` with every broken rule,
    /// workouts not in the catalog last. A schedule past the size limits is refused first, without looking anything
    /// up; the workouts it names are looked up together, in one read of the catalog.
    func validated(_ body: Components.Schemas.PlanInput, id: PlanID, workouts: CatalogLookup? = nil) async throws -> TrainingPlan {
        let draft = PlanDraft(body)
        try PlanRules.checkSize(draft)
        let workouts = workouts ?? CatalogLookup(store: catalog)
        let found = try await workouts.existing(Set(draft.workoutIDs))
        return try PlanRules.checked(draft, id: id, inCatalog: found)
    }
}

extension PlanDraft {
    /// The draft of a REST body or pushed mutation.
    init(_ body: Components.Schemas.PlanInput) {
        self.init(
            name: body.name, notes: body.notes, startDate: body.startDate, endDate: body.endDate, daysPerWeek: body.daysPerWeek,
            isCompleted: body.isCompleted,
            weeklyWorkouts: body.weeklyWorkouts.map { week in
                .init(week: week.week, days: week.days.map { .init(day: $0.day, workoutIds: $0.workoutIds) })
            }
        )
    }
}

/// A checked plan: written whole, its version the feed's, `createdAt` kept when it replaces one.
struct PlanWrite: SyncedWrite {
    /// The writer's tier keeps only ``PlanRules/plansWithoutCustomPlans``: the problem for one more.
    struct Limit: Sendable {
        var problem: Problem
    }

    var plan: TrainingPlan
    var limit: Limit? = nil

    /// The push's write: the row goes with the push's next statement, and `createdAt` is not read back.
    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange {
        let (stored, change) = try await entered(write, on: db)
        try await PlanStore.write(stored, of: write.user, on: db)
        return change
    }

    /// Writes the plan and returns it as stored, with its feed entry.
    func saved(_ write: FeedWrite, on db: any SQLDatabase) async throws -> (plan: StoredPlan, change: SyncChange) {
        var (saved, change) = try await entered(write, on: db)
        saved.createdAt = try await PlanStore.upsert(saved, of: write.user, on: db)
        return (saved, change)
    }

    /// Checks the tier's plan limit and enters the change into the feed: the plan to store, with its version.
    private func entered(_ write: FeedWrite, on db: any SQLDatabase) async throws -> (plan: StoredPlan, change: SyncChange) {
        if let limit {
            // Holding the user's feed row first makes two concurrent creations count one after the other.
            try await SyncFeed.lockSequence(of: write.user, on: db)
            let stamp = try await SyncFeed.stamp(.plans, id: plan.id.description, of: write.user, on: db)
            if stamp.map(\.deleted) ?? true, PlanRules.anotherPlanNeedsCustomPlans(keeping: try await PlanStore.count(of: write.user, on: db)) { throw limit.problem }
        }
        let change = try await write.record(.plans, id: plan.id.description, deleted: false, on: db)
        return (StoredPlan(plan: plan, version: change.stamp.version, createdAt: write.updatedAt, updatedAt: write.updatedAt), change)
    }
}

import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``PlanService`` over the synced `plans` collection, and the SDK's ``FitBaseClient/planProgression(planId:week:)``
/// for suggestions.
public struct LivePlanService: PlanService {
    let engine: SyncEngine
    let client: FitBaseClient

    public func plans() async throws(KitError) -> [TrainingPlan] {
        try await storage { try await engine.plans.plans() }
    }

    public func plan(id: PlanID) async throws(KitError) -> TrainingPlan? {
        try await storage { try await engine.plans.get(id) }
    }

    public func save(_ plan: TrainingPlan) async throws(KitError) -> TrainingPlan {
        let draft = PlanDraft(plan)
        do throws(InvalidFields) {
            try PlanRules.checkSize(draft)
            let errors = PlanRules.fieldErrors(draft)
            if !errors.isEmpty { throw InvalidFields(errors) }
        } catch {
            throw KitError(error)
        }
        try await storage { try await engine.plans.save(plan) }
        return plan
    }

    public func delete(id: PlanID) async throws(KitError) {
        try await storage { try await engine.plans.delete(id) }
    }

    public func syncNow() async throws(KitError) {
        do throws(FitBaseError) {
            try await engine.syncNow()
        } catch {
            throw KitError(error)
        }
    }

    public func syncStatus() async -> AsyncStream<SyncStatus> {
        await engine.statusUpdates()
    }

    public func progression(of id: PlanID, week: Int?) async throws(KitError) -> PlanProgression.Suggestion {
        let client = self.client
        return try await kit { () async throws(FitBaseError) in
            try ContractJSON.record(PlanProgression.Suggestion.self, from: try await client.planProgression(planId: id, week: week))
        }
    }
}

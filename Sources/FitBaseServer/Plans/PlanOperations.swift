import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// The signed-in user's training plans. Plans are reachable only by their owner.
protocol PlanOperations: FeatureOperations { var plansFeature: PlansFeature { get } }

extension PlanOperations {
    func listPlans(_ input: Operations.ListPlans.Input) async throws -> Operations.ListPlans.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let page = try await plansFeature.plans.plans(of: caller.user, offset: offset, limit: limit + 1)
        return .ok(.init(body: .json(.init(
            items: page.prefix(limit).map(PlanWire.wire), nextCursor: page.count > limit ? PageRequest.cursor(offset: offset + limit) : nil
        ))))
    }

    func createPlan(_ input: Operations.CreatePlan.Input) async throws -> Operations.CreatePlan.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let plan = try await plansFeature.collection.validated(body, id: ids.make())
        let saved = try await plansFeature.collection.create(plan, by: caller, now: clock.now)
        return .created(.init(body: .json(PlanWire.wire(saved))))
    }

    func getPlan(_ input: Operations.GetPlan.Input) async throws -> Operations.GetPlan.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = PlanID(input.path.planId), let plan = try await plansFeature.plans.plan(id, of: caller.user) else {
            throw Problem.notFound("No plan \(input.path.planId) of yours.")
        }
        return .ok(.init(body: .json(PlanWire.wire(plan))))
    }

    func replacePlan(_ input: Operations.ReplacePlan.Input) async throws -> Operations.ReplacePlan.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        guard let id = PlanID(input.path.planId) else { throw Problem.notFound("No plan \(input.path.planId) of yours.") }
        let now = clock.now
        let plan = try await plansFeature.collection.validated(body, id: id)
        guard let replaced = try await plansFeature.collection.replace(plan, of: caller.user, now: now) else {
            throw Problem.notFound("No plan \(input.path.planId) of yours.")
        }
        return .ok(.init(body: .json(PlanWire.wire(replaced))))
    }

    func deletePlan(_ input: Operations.DeletePlan.Input) async throws -> Operations.DeletePlan.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = PlanID(input.path.planId), try await plansFeature.collection.delete(id, of: caller.user, now: clock.now) else {
            throw Problem.notFound("No plan \(input.path.planId) of yours.")
        }
        return .noContent(.init())
    }

    func getPlanProgression(_ input: Operations.GetPlanProgression.Input) async throws -> Operations.GetPlanProgression.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = PlanID(input.path.planId), let suggestion = try await plansFeature.progression.suggestion(for: id, week: input.query.week, caller: caller, now: clock.now) else {
            throw Problem.notFound("No plan \(input.path.planId) of yours.")
        }
        return .ok(.init(body: .json(PlanWire.wire(suggestion, of: id))))
    }

    // MARK: Wire


}

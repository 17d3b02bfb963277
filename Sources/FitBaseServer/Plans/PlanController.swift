import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// The signed-in user's training plans. Plans are reachable only by their owner.
struct PlanController: Sendable {
    let plans: PlanStore
    let catalog: CatalogStore
    let entitlements: EntitlementService

    func listPlans(_ input: Operations.ListPlans.Input) async throws -> Operations.ListPlans.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let page = try await plans.plans(of: caller.user, offset: offset, limit: limit + 1)
        return .ok(.init(body: .json(.init(
            items: page.prefix(limit).map(Self.wire), nextCursor: page.count > limit ? PageRequest.cursor(offset: offset + limit) : nil
        ))))
    }

    func createPlan(_ input: Operations.CreatePlan.Input) async throws -> Operations.CreatePlan.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let plan = try await validated(body, id: PlanID(), now: .storageNow)
        let limit = try await entitlements.allows(.customPlans, caller: caller) ? nil : (Self.plansWithoutCustomPlans, morePlansRequireUpgrade())
        let saved = try await plans.insert(plan, of: caller.user, limit: limit)
        return .created(.init(body: .json(Self.wire(saved))))
    }

    func getPlan(_ input: Operations.GetPlan.Input) async throws -> Operations.GetPlan.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = PlanID(input.path.planId), let plan = try await plans.plan(id, of: caller.user) else {
            throw Problem.notFound("No plan \(input.path.planId) of yours.")
        }
        return .ok(.init(body: .json(Self.wire(plan))))
    }

    func replacePlan(_ input: Operations.ReplacePlan.Input) async throws -> Operations.ReplacePlan.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        guard let id = PlanID(input.path.planId) else { throw Problem.notFound("No plan \(input.path.planId) of yours.") }
        let now = Date.storageNow
        let plan = try await validated(body, id: id, now: now)
        guard let replaced = try await plans.replace(plan, of: caller.user, now: now) else {
            throw Problem.notFound("No plan \(input.path.planId) of yours.")
        }
        return .ok(.init(body: .json(Self.wire(replaced))))
    }

    func deletePlan(_ input: Operations.DeletePlan.Input) async throws -> Operations.DeletePlan.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = PlanID(input.path.planId), try await plans.delete(id, of: caller.user, now: .storageNow) else {
            throw Problem.notFound("No plan \(input.path.planId) of yours.")
        }
        return .noContent(.init())
    }

    // MARK: Helpers

    /// Every tier may keep this many plans; more are the `customPlans` feature.
    static let plansWithoutCustomPlans = 1

    /// The 402 for a plan beyond ``plansWithoutCustomPlans``.
    func morePlansRequireUpgrade() -> Problem {
        EntitlementService.upgradeRequired(
            .customPlans, tier: entitlements.catalog.tierFeatures.requiredTier(for: .customPlans),
            doing: "Keeping more than \(Self.plansWithoutCustomPlans) plan"
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

    static func wire(_ plan: TrainingPlan) -> Components.Schemas.TrainingPlan {
        .init(
            id: plan.id.description, name: plan.name, notes: plan.notes, startDate: plan.startDate.description,
            endDate: plan.endDate?.description, daysPerWeek: plan.daysPerWeek, isCompleted: plan.isCompleted,
            weeklyWorkouts: plan.weeklyWorkouts.map { week in
                .init(week: week.week, days: week.days.map { .init(day: $0.day, workoutIds: $0.workoutIds) })
            },
            version: plan.version, createdAt: plan.createdAt, updatedAt: plan.updatedAt
        )
    }
}

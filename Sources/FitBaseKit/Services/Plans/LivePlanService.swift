import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import HTTPTypes

/// ``PlanService`` over the synced `plans` collection, and `/v1/plans/{planId}/progression` for suggestions.
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
        do throws(FitBaseError) {
            return try PlanProgression.Suggestion(wire: try await client.planProgression(planId: id, week: week))
        } catch {
            throw KitError(error)
        }
    }
}

extension PlanProgression.Suggestion {
    /// The suggestion an answer holds; dates and ids that do not read are the server's fault.
    init(wire: PlanProgressionSuggestion) throws(FitBaseError) {
        func day(_ text: String) throws(FitBaseError) -> CalendarDay {
            guard let day = CalendarDay(text) else { throw .unexpectedResponse(statusCode: 200) }
            return day
        }
        func workout(_ text: String) throws(FitBaseError) -> WorkoutID {
            guard let id = WorkoutID(text) else { throw .unexpectedResponse(statusCode: 200) }
            return id
        }
        var sessions: [PlanProgression.Session] = []
        for session in wire.sessions {
            sessions.append(PlanProgression.Session(
                day: session.day, date: try day(session.date), phase: session.phase, plannedWorkout: try workout(session.plannedWorkoutId),
                workout: try workout(session.workoutId), action: session.action, plannedDuration: session.plannedDuration,
                suggestedDuration: session.suggestedDuration, reason: session.reason
            ))
        }
        let summary = wire.summary
        self.init(
            week: wire.week, startDate: try day(wire.startDate), endDate: try day(wire.endDate), sessions: sessions,
            summary: PlanProgression.Summary(
                from: try day(summary.fromDate), to: try day(summary.toDate), weeks: summary.weeks, plannedSessions: summary.plannedSessions,
                completedSessions: summary.completedSessions, completionRate: summary.completionRate, loggedWorkouts: summary.loggedWorkouts,
                ratedWorkouts: summary.ratedWorkouts, averageRating: summary.averageRating, averageEnergyBefore: summary.averageEnergyBefore,
                averageEnergyAfter: summary.averageEnergyAfter, energyTrend: summary.energyTrend, isDeload: summary.deload,
                hasEnoughHistory: summary.enoughHistory, note: summary.note
            )
        )
    }
}

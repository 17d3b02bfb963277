import FitBaseAPI
import FitBaseCore
import Foundation

/// The wire form of plans: Core's values to the contract's types and back, mapped in this one place for controllers,
/// collections and owners alike.
enum PlanWire {
    static func wire(_ suggestion: PlanProgression.Suggestion, of plan: PlanID) -> Components.Schemas.PlanProgression {
        let summary = suggestion.summary
        return .init(
            planId: plan.description, week: suggestion.week, startDate: suggestion.startDate.description, endDate: suggestion.endDate.description,
            sessions: suggestion.sessions.map { session in
                .init(
                    day: session.day, date: session.date.description, phase: session.phase,
                    plannedWorkoutId: session.plannedWorkout.description, workoutId: session.workout.description,
                    action: session.action, plannedDuration: session.plannedDuration,
                    suggestedDuration: session.suggestedDuration, reason: session.reason
                )
            },
            summary: .init(
                fromDate: summary.from.description, toDate: summary.to.description, weeks: summary.weeks,
                plannedSessions: summary.plannedSessions, completedSessions: summary.completedSessions, completionRate: summary.completionRate,
                loggedWorkouts: summary.loggedWorkouts, ratedWorkouts: summary.ratedWorkouts, averageRating: summary.averageRating,
                averageEnergyBefore: summary.averageEnergyBefore, averageEnergyAfter: summary.averageEnergyAfter,
                energyTrend: summary.energyTrend, deload: summary.isDeload,
                enoughHistory: summary.hasEnoughHistory, note: summary.note
            )
        )
    }

    static func wire(_ stored: StoredPlan) -> Components.Schemas.TrainingPlan {
        let plan = stored.plan
        return .init(
            id: plan.id.description, name: plan.name, notes: plan.notes, startDate: plan.startDate.description,
            endDate: plan.endDate?.description, daysPerWeek: plan.daysPerWeek, isCompleted: plan.isCompleted,
            weeklyWorkouts: plan.weeklyWorkouts.map { week in
                .init(week: week.week, days: week.days.map { .init(day: $0.day, workoutIds: $0.workouts.map(\.description)) })
            },
            version: stored.version, createdAt: stored.createdAt, updatedAt: stored.updatedAt
        )
    }
}

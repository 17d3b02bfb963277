import FitBaseAPI
import FitBaseCore
import Foundation

/// The wire form of workout history: Core's values to the contract's types and back, mapped in this one place for controllers,
/// collections and owners alike.
enum HistoryWire {
    static func wire(_ log: WorkoutLog) -> Components.Schemas.WorkoutLog {
        .init(
            id: log.id.description, workoutId: log.workout.description, workoutType: log.workoutType,
            workoutTitle: log.workoutTitle, completedAt: log.completedAt, localDate: log.localDate.description,
            duration: log.durationMinutes, rating: log.rating, energyBefore: log.energyBefore, energyAfter: log.energyAfter,
            notes: log.notes, cyclePhase: log.cyclePhase, cycleDay: log.cycleDay
        )
    }
}

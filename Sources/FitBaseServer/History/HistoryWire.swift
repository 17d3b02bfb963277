import FitBaseAPI
import FitBaseCore
import Foundation

/// How workout history cross the wire: Core's values to the contract's types and back. The one place they are mapped; controllers,
/// collections and owners all call these.
enum HistoryWire {
    static func wire(_ log: WorkoutLog) -> Components.Schemas.WorkoutLog {
        .init(
            id: log.id.description, workoutId: log.workout.description, workoutType: .init(rawValue: log.workoutType.rawValue) ?? .strength,
            workoutTitle: log.workoutTitle, completedAt: log.completedAt, localDate: log.localDate.description,
            duration: log.durationMinutes, rating: log.rating, energyBefore: log.energyBefore, energyAfter: log.energyAfter,
            notes: log.notes, cyclePhase: log.cyclePhase.flatMap { .init(rawValue: $0.rawValue) }, cycleDay: log.cycleDay
        )
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The tag of ``WorkoutLogID``.
public enum WorkoutLogTag {}
/// Identifies a workout log.
public typealias WorkoutLogID = Identifier<WorkoutLogTag>

/// A completed workout, with the local day and cycle position fixed when it was logged.
public struct WorkoutLog: Sendable, Equatable {
    public var id: WorkoutLogID
    public var workout: WorkoutID
    public var workoutType: WorkoutType
    public var workoutTitle: String
    public var completedAt: Date
    public var localDate: CalendarDay
    public var durationMinutes: Int
    public var rating: Int?
    public var energyBefore: Int?
    public var energyAfter: Int?
    public var notes: String?
    public var cyclePhase: CyclePhase?
    public var cycleDay: Int?

    public init(
        id: WorkoutLogID, workout: WorkoutID, workoutType: WorkoutType, workoutTitle: String, completedAt: Date, localDate: CalendarDay,
        durationMinutes: Int, rating: Int?, energyBefore: Int?, energyAfter: Int?, notes: String?, cyclePhase: CyclePhase?, cycleDay: Int?
    ) {
        self.id = id
        self.workout = workout
        self.workoutType = workoutType
        self.workoutTitle = workoutTitle
        self.completedAt = completedAt
        self.localDate = localDate
        self.durationMinutes = durationMinutes
        self.rating = rating
        self.energyBefore = energyBefore
        self.energyAfter = energyAfter
        self.notes = notes
        self.cyclePhase = cyclePhase
        self.cycleDay = cycleDay
    }
}

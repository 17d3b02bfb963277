#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The tag of ``WorkoutLogID``.
public enum WorkoutLogTag {}
/// Identifies a workout log.
public typealias WorkoutLogID = Identifier<WorkoutLogTag>

/// A completed workout (the `workoutLogs` collection): what the user logged, with the workout's type and title, the
/// local day and the cycle position fixed when it was logged. The one type of it from the server's store to the app's
/// screens; its JSON is the API's (`workoutId`, `duration`, `localDate` written `YYYY-MM-DD`). A device fills the type,
/// title and day from the workout it logged and its own time zone; the server fixes them, and the cycle position, when
/// the log reaches it.
public struct WorkoutLog: Sendable, Hashable, Identifiable, Codable {
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

    private enum CodingKeys: String, CodingKey {
        case id, workoutType, workoutTitle, completedAt, localDate, rating, energyBefore, energyAfter, notes, cyclePhase, cycleDay
        case workout = "workoutId"
        case durationMinutes = "duration"
    }
}

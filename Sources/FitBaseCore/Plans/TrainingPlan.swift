#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The tag of ``PlanID``.
public enum TrainingPlanTag {}
/// Identifies a training plan.
public typealias PlanID = Identifier<TrainingPlanTag>

/// A training plan: weeks of days (1 = Monday … 7 = Sunday), each with the workouts to do.
public struct TrainingPlan: Sendable, Equatable {
    public struct Week: Sendable, Equatable, Codable {
        public var week: Int
        public var days: [Day]

        public init(week: Int, days: [Day]) {
            self.week = week
            self.days = days
        }
    }

    public struct Day: Sendable, Equatable, Codable {
        public var day: Int
        public var workoutIds: [String]

        public init(day: Int, workoutIds: [String]) {
            self.day = day
            self.workoutIds = workoutIds
        }
    }

    public var id: PlanID
    public var name: String
    public var notes: String?
    public var startDate: CalendarDay
    public var endDate: CalendarDay?
    public var daysPerWeek: Int
    public var isCompleted: Bool
    public var weeklyWorkouts: [Week]
    public var version: Int
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: PlanID, name: String, notes: String?, startDate: CalendarDay, endDate: CalendarDay?, daysPerWeek: Int,
        isCompleted: Bool, weeklyWorkouts: [Week], version: Int, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.name = name
        self.notes = notes
        self.startDate = startDate
        self.endDate = endDate
        self.daysPerWeek = daysPerWeek
        self.isCompleted = isCompleted
        self.weeklyWorkouts = weeklyWorkouts
        self.version = version
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

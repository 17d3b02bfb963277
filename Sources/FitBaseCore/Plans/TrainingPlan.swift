#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The tag of ``PlanID``.
public enum TrainingPlanTag {}
/// Identifies a training plan.
public typealias PlanID = Identifier<TrainingPlanTag>

/// A training plan (the `plans` collection): weeks of days (1 = Monday … 7 = Sunday), each with the catalog workouts
/// to do. The one type of it from the server's store to the app's screens; its JSON is the API's (`workoutIds`,
/// days written `YYYY-MM-DD`). A plan is valid when ``PlanRules`` passes it; the server keeps its version and times
/// beside it.
public struct TrainingPlan: Sendable, Equatable, Identifiable, Codable {
    /// A week of the plan.
    public struct Week: Sendable, Equatable, Codable {
        /// Its number, 1, 2, 3… in order.
        public var week: Int
        /// Its days.
        public var days: [Day]

        /// A week from its fields.
        public init(week: Int, days: [Day]) {
            self.week = week
            self.days = days
        }
    }

    /// A day of a week.
    public struct Day: Sendable, Equatable, Codable {
        /// 1 = Monday … 7 = Sunday.
        public var day: Int
        /// Catalog workouts, in the order they are done.
        public var workouts: [WorkoutID]

        /// A day from its fields.
        public init(day: Int, workouts: [WorkoutID]) {
            self.day = day
            self.workouts = workouts
        }

        private enum CodingKeys: String, CodingKey {
            case day
            case workouts = "workoutIds"
        }
    }

    public var id: PlanID
    /// 1–200 characters, without surrounding whitespace.
    public var name: String
    /// Free text.
    public var notes: String?
    /// The plan's first day.
    public var startDate: CalendarDay
    /// Not before ``startDate``.
    public var endDate: CalendarDay?
    /// 1–7.
    public var daysPerWeek: Int
    /// Whether the user has finished it.
    public var isCompleted: Bool
    /// The schedule, week by week.
    public var weeklyWorkouts: [Week]

    /// A plan from its fields; a new one gets a fresh id.
    public init(
        id: PlanID = PlanID(), name: String, notes: String? = nil, startDate: CalendarDay, endDate: CalendarDay? = nil, daysPerWeek: Int,
        isCompleted: Bool = false, weeklyWorkouts: [Week] = []
    ) {
        self.id = id
        self.name = name
        self.notes = notes
        self.startDate = startDate
        self.endDate = endDate
        self.daysPerWeek = daysPerWeek
        self.isCompleted = isCompleted
        self.weeklyWorkouts = weeklyWorkouts
    }

    /// Whether the plan has a workout on `day`: the plan week `day` falls in (from the start date; past the last listed
    /// week, the last one repeats) lists its weekday (1 = Monday … 7 = Sunday). The end date is the caller's to check.
    public func trains(on day: CalendarDay) -> Bool {
        guard day >= startDate, !weeklyWorkouts.isEmpty else { return false }
        let number = startDate.days(until: day) / 7 + 1
        let week = weeklyWorkouts.first { $0.week == number } ?? weeklyWorkouts.max { $0.week < $1.week }
        let weekday = ((day.daysSince1970 + 3) % 7 + 7) % 7 + 1
        return week?.days.contains { $0.day == weekday && !$0.workouts.isEmpty } ?? false
    }
}

extension PlanDraft {
    /// The draft of a plan, to check it again (``PlanRules``) before it is saved.
    public init(_ plan: TrainingPlan) {
        self.init(
            name: plan.name, notes: plan.notes, startDate: plan.startDate.description, endDate: plan.endDate?.description,
            daysPerWeek: plan.daysPerWeek, isCompleted: plan.isCompleted,
            weeklyWorkouts: plan.weeklyWorkouts.map { week in
                .init(week: week.week, days: week.days.map { .init(day: $0.day, workoutIds: $0.workouts.map(\.description)) })
            }
        )
    }
}

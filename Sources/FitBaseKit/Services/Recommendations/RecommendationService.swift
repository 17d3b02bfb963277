import FitBaseCore
import Foundation

/// One day of the recommended week: a training day with its workout, or a rest day.
public struct WeekPlanDay: Sendable, Equatable, Identifiable {
    /// The user's local day.
    public var date: CalendarDay
    /// The day's phase, when the cycle is tracked.
    public var phase: CyclePhase?
    /// The day's cycle day, when the cycle is tracked.
    public var cycleDay: Int?
    /// The phase is a prediction (every day but today).
    public var isPredicted: Bool
    /// Why the day trains or rests, for the day's row.
    public var note: String
    /// The day's workout; `nil` on a rest day.
    public var workout: CatalogWorkout?

    public var id: CalendarDay { date }
    /// A day without a workout.
    public var isRestDay: Bool { workout == nil }

    /// Makes a day.
    public init(date: CalendarDay, phase: CyclePhase?, cycleDay: Int?, isPredicted: Bool, note: String, workout: CatalogWorkout?) {
        self.date = date
        self.phase = phase
        self.cycleDay = cycleDay
        self.isPredicted = isPredicted
        self.note = note
        self.workout = workout
    }
}

/// The recommended week (seed 001's weekly plan): seven days from today following the predicted phases, with rest
/// days by fitness level where the phase leaves the least energy.
public struct WeekRecommendations: Sendable, Equatable {
    /// The first day (the user's today when it was made).
    public var startDate: CalendarDay
    /// Seven days, in order.
    public var days: [WeekPlanDay]
    /// Who laid the week out: always the rules (`rules`).
    public var source: String

    /// Makes a week.
    public init(startDate: CalendarDay, days: [WeekPlanDay], source: String) {
        self.startDate = startDate
        self.days = days
        self.source = source
    }
}

/// Cycle-synced recommendations (seed 001): today's workouts and the low-energy alternative, and the week ahead,
/// cache-first.
public protocol RecommendationService: Sendable {
    /// Today's suggestions for `energy` (the user's answer to "how do you feel?", if given).
    func today(energy: EnergyLevel?, policy: CachePolicy) async throws(KitError) -> Loaded<TodayRecommendations>
    /// Asks for new suggestions now (after logging a workout or a period, or changing the energy answer).
    func refresh(energy: EnergyLevel?) async throws(KitError) -> TodayRecommendations
    /// The seven days from today: a workout for each training day and the rest days.
    func week(policy: CachePolicy) async throws(KitError) -> Loaded<WeekRecommendations>
}

import FitBaseCore
import Foundation

/// A completed workout as the user logs it at the end of a session.
public struct WorkoutCompletion: Sendable, Equatable {
    /// The catalog workout done.
    public var workoutID: WorkoutID
    /// When it ended.
    public var completedAt: Date
    /// Minutes trained (``WorkoutLogRules/durationRange``).
    public var durationMinutes: Int
    /// How the user rated it, 1…5.
    public var rating: Int?
    /// Energy before and after, 1…5.
    public var energyBefore: Int?
    public var energyAfter: Int?
    /// The user's notes.
    public var notes: String?

    /// Makes a completion.
    public init(
        workoutID: WorkoutID, completedAt: Date, durationMinutes: Int, rating: Int? = nil, energyBefore: Int? = nil, energyAfter: Int? = nil,
        notes: String? = nil
    ) {
        self.workoutID = workoutID
        self.completedAt = completedAt
        self.durationMinutes = durationMinutes
        self.rating = rating
        self.energyBefore = energyBefore
        self.energyAfter = energyAfter
        self.notes = notes
    }

    /// The completion as Core's ``WorkoutLogRules`` read it.
    public var draft: WorkoutLogDraft {
        WorkoutLogDraft(
            workoutId: workoutID.description, completedAt: completedAt, duration: durationMinutes, rating: rating,
            energyBefore: energyBefore, energyAfter: energyAfter, notes: notes
        )
    }

    /// The log this completion makes under Core's rules (the server's), on the device's day in `timeZone`; `workout` is
    /// the catalog's (nil: not known).
    func log(of workout: CatalogWorkout?, now: Date, timeZone: TimeZone) throws(KitError) -> WorkoutLog {
        do throws(InvalidFields) {
            let checked = try WorkoutLogRules.checked(draft, workout: workout, now: now)
            return checked.log(id: WorkoutLogID(), localDate: CalendarDay(completedAt, in: timeZone), cycle: nil)
        } catch {
            throw KitError(error)
        }
    }
}

/// A logged workout in the history list: Core's log (its type, title and day the device's until the server fixes them
/// with the cycle position) and whether it still waits to reach the server.
public struct LoggedWorkout: Sendable, Equatable, Identifiable {
    /// The log.
    public var log: WorkoutLog
    /// Whether the log still waits to reach the server.
    public var isPendingSync: Bool

    public var id: WorkoutLogID { log.id }

    /// Makes a row.
    public init(log: WorkoutLog, isPendingSync: Bool = false) {
        self.log = log
        self.isPendingSync = isPendingSync
    }
}

/// What a history chart plots per week.
public enum HistoryMetric: String, Sendable, Equatable, CaseIterable {
    case workouts, minutes
}

/// Workout history (seed 001): logging a completion with its rating and energy (offline-first), the list, statistics
/// and weekly chart series.
public protocol HistoryService: Sendable {
    /// Logs a completed workout (saved on the device at once, sent with the next sync).
    func log(_ completion: WorkoutCompletion) async throws(KitError) -> LoggedWorkout
    /// Logged workouts, newest first.
    func history() async throws(KitError) -> [LoggedWorkout]
    /// Deletes a log.
    func deleteLog(id: WorkoutLogID) async throws(KitError)
    /// Totals, streaks and this week; the breakdowns (by type, by phase, the weeks, the energy change) only when the
    /// user's tier has ``HistoryStatistics/detailFeature``, empty otherwise — as the server's statistics.
    func stats() async throws(KitError) -> HistoryStatistics
    /// The last `weeks` weeks of `metric`, oldest first, one point per week (starting Monday), each log in the week of
    /// its stored local day; ``KitError/Kind/upgradeRequired`` when the user's tier lacks
    /// ``HistoryStatistics/detailFeature``.
    func weeklySeries(_ metric: HistoryMetric, weeks: Int) async throws(KitError) -> [ChartPoint]
}

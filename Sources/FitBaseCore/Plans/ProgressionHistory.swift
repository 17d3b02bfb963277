#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the weeks before a suggested plan week show: which planned sessions were done, how they were rated, how much
/// energy the user brought, and whether those weeks were a block of full training (the input of ``PlanProgression``).
///
/// The window is the ``PlanProgression/windowWeeks`` calendar weeks (Monday to Sunday) before the suggested week.
/// Every log in it counts for ratings and energy; only the weeks of the plan (week 1 on) have planned sessions.
/// A planned session is *done* when a log of the same workout falls in the same plan week (any day of it, each log
/// done once); it is *due* once its day has passed (`today` itself is still open) or when it is done.
public struct ProgressionHistory: Sendable, Equatable {
    /// One plan week of the window.
    public struct Week: Sendable, Equatable {
        /// The plan week's number.
        public let week: Int
        /// Planned sessions due by `today`.
        public let due: Int
        /// Of those, the ones done.
        public let done: Int
        /// Minutes trained that week, weighted by intensity (low 1, medium 2, high 3; an unknown workout counts as medium).
        public let load: Int
        /// Whether the whole week is before `today`.
        public let isOver: Bool
    }

    /// The window's first day (a Monday).
    public let firstDay: CalendarDay
    /// The window's last day (the Sunday before the suggested week).
    public let lastDay: CalendarDay
    /// The plan weeks of the window, oldest first (none when week 1 is suggested).
    public let weeks: [Week]
    /// Logs in the window, oldest first.
    public let logs: [WorkoutLog]

    /// The window before plan week `week` of a plan whose first week starts on the Monday of `planStart`.
    public init(
        week: Int, planStart: CalendarDay, schedule: [TrainingPlan.Week], logs allLogs: [WorkoutLog], catalog: [WorkoutID: CatalogWorkout],
        today: CalendarDay
    ) {
        let suggestedStart = PlanProgression.firstDay(ofWeek: week, planStart: planStart)
        firstDay = suggestedStart.adding(days: -7 * PlanProgression.windowWeeks)
        lastDay = suggestedStart.adding(days: -1)
        let (first, last) = (firstDay, lastDay)
        logs = allLogs.filter { (first...last).contains($0.localDate) && $0.localDate <= today }
            .sorted { ($0.completedAt, $0.id.description) < ($1.completedAt, $1.id.description) }
        let windowLogs = logs
        weeks = (max(1, week - PlanProgression.windowWeeks)..<week).compactMap { number in
            guard schedule.indices.contains(number - 1) else { return nil }
            let monday = PlanProgression.firstDay(ofWeek: number, planStart: planStart)
            let inWeek = windowLogs.filter { (monday...monday.adding(days: 6)).contains($0.localDate) }
            var unused = inWeek
            var due = 0
            var done = 0
            for day in schedule[number - 1].days.sorted(by: { $0.day < $1.day }) {
                for workout in day.workouts {
                    let matched = unused.firstIndex { $0.workout == workout }
                    if let matched {
                        unused.remove(at: matched)
                        done += 1
                    }
                    if matched != nil || monday.adding(days: day.day - 1) < today { due += 1 }
                }
            }
            let load = inWeek.reduce(0) { total, log in
                let factor = switch catalog[log.workout]?.intensity ?? .medium {
                case .low: 1
                case .medium: 2
                case .high: 3
                }
                return total + log.durationMinutes * factor
            }
            return Week(week: number, due: due, done: done, load: load, isOver: monday.adding(days: 6) < today)
        }
    }

    /// Planned sessions due in the window.
    public var due: Int { weeks.reduce(0) { $0 + $1.due } }
    /// Planned sessions done in the window.
    public var done: Int { weeks.reduce(0) { $0 + $1.done } }

    /// Done ÷ due; `nil` when nothing was due.
    public var completionRate: Double? { due == 0 ? nil : Double(done) / Double(due) }

    /// The logs' ratings.
    public var ratings: [Int] { logs.compactMap(\.rating) }

    /// The mean rating; `nil` when no log is rated.
    public var averageRating: Double? { Self.mean(ratings) }

    /// The mean rating of logs of `type` when at least two are rated, else of every log.
    public func averageRating(of type: WorkoutType) -> (value: Double, ofType: Bool)? {
        let ofType = logs.filter { $0.workoutType == type }.compactMap(\.rating)
        if ofType.count >= 2, let mean = Self.mean(ofType) { return (mean, true) }
        return averageRating.map { ($0, false) }
    }

    /// The mean energy before workouts (the readiness the user brings).
    public var averageEnergyBefore: Double? { Self.mean(logs.compactMap(\.energyBefore)) }
    /// The mean energy after workouts.
    public var averageEnergyAfter: Double? { Self.mean(logs.compactMap(\.energyAfter)) }

    /// The latest calendar week's mean energy before workouts and the mean of the earlier weeks' readings; `nil`
    /// unless two weeks of the window have readings.
    public var energyShift: (earlier: Double, latest: Double)? {
        let readings = logs.compactMap { log in log.energyBefore.map { (week: firstDay.days(until: log.localDate) / 7, value: $0) } }
        guard let latestWeek = readings.map(\.week).max(), readings.contains(where: { $0.week != latestWeek }),
            let earlier = Self.mean(readings.filter { $0.week != latestWeek }.map(\.value)),
            let latest = Self.mean(readings.filter { $0.week == latestWeek }.map(\.value))
        else { return nil }
        return (earlier, latest)
    }

    /// Falling when the latest week's energy is at least ``PlanProgression/energyDrop`` below the earlier weeks',
    /// rising when as much above, steady otherwise; `nil` without two weeks of readings.
    public var energyTrend: PlanProgression.EnergyTrend? {
        guard let shift = energyShift else { return nil }
        let change = shift.latest - shift.earlier
        return change <= -PlanProgression.energyDrop ? .falling : change >= PlanProgression.energyDrop ? .rising : .steady
    }

    /// Whether the window is a block of full training that calls for a deload: every one of its weeks a plan week,
    /// over, with sessions due and at least ``PlanProgression/progressCompletion`` of them done, and none of them
    /// already light (load under ``PlanProgression/lightWeekShare`` of the heaviest).
    public var isHighStrainBlock: Bool {
        guard weeks.count == PlanProgression.windowWeeks, let heaviest = weeks.map(\.load).max(), heaviest > 0 else { return false }
        return weeks.allSatisfy { week in
            week.isOver && week.due > 0 && Double(week.done) >= PlanProgression.progressCompletion * Double(week.due)
                && Double(week.load) >= PlanProgression.lightWeekShare * Double(heaviest)
        }
    }

    static func mean(_ values: [Int]) -> Double? {
        values.isEmpty ? nil : Double(values.reduce(0, +)) / Double(values.count)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A user's workout statistics as of `today` (their local day): totals, streaks, this week, and the detail of the
/// `analytics` feature — counts by type and cycle phase, the last 12 weeks, the energy change by phase.
public struct HistoryStatistics: Sendable, Equatable {
    /// The feature a tier needs for the detail (by type, by phase, the weeks, the energy change): the server answers
    /// `detail=full` only with it, and the SDK computes the detail only with it.
    public static let detailFeature = Feature.analytics

    /// One week of the last twelve.
    public struct Week: Sendable, Equatable {
        public var start: CalendarDay
        public var workouts: Int
        public var minutes: Int

        public init(start: CalendarDay, workouts: Int, minutes: Int) {
            self.start = start
            self.workouts = workouts
            self.minutes = minutes
        }
    }

    public var totalWorkouts: Int
    public var totalMinutes: Int
    public var currentStreak: Int
    public var longestStreak: Int
    /// Workouts from this week's Monday to today.
    public var thisWeek: Int
    /// Workouts by type.
    public var byType: [WorkoutType: Int]
    /// Workouts by the cycle phase they were logged in; logs without a phase are left out.
    public var byPhase: [CyclePhase: Int]
    /// The last twelve weeks, oldest first, ending with this one.
    public var weekly: [Week]
    /// The mean of (energy after − energy before) by cycle phase, over logs that have both.
    public var energyChangeByPhase: [CyclePhase: Double]

    /// What every tier sees (the server's `GET /v1/history/stats` without `detail=full`): the totals, streaks and this
    /// week, with the `analytics` feature's detail — by type, by phase, the weeks, the energy change — left empty.
    public var basic: HistoryStatistics {
        var basic = self
        basic.byType = [:]
        basic.byPhase = [:]
        basic.weekly = []
        basic.energyChangeByPhase = [:]
        return basic
    }

    /// The statistics of `logs` as of `today`; the detail left empty (as ``basic``, never computed) unless `detailed`.
    public init(logs: [WorkoutLog], today: CalendarDay, detailed: Bool = true) {
        let days = Set(logs.map(\.localDate))
        let thisWeekStart = WorkoutStreaks.weekStart(of: today)
        totalWorkouts = logs.count
        totalMinutes = logs.reduce(0) { $0 + $1.durationMinutes }
        currentStreak = WorkoutStreaks.current(days: days, today: today)
        longestStreak = WorkoutStreaks.longest(days: days)
        thisWeek = logs.filter { $0.localDate >= thisWeekStart && $0.localDate <= today }.count
        guard detailed else {
            (byType, byPhase, weekly, energyChangeByPhase) = ([:], [:], [], [:])
            return
        }
        byType = Dictionary(grouping: logs, by: \.workoutType).mapValues(\.count)
        byPhase = Dictionary(grouping: logs.compactMap { $0.cyclePhase }, by: { $0 }).mapValues(\.count)
        weekly = (0..<12).map { thisWeekStart.adding(days: -7 * (11 - $0)) }.map { start in
            let inWeek = logs.filter { (start...start.adding(days: 6)).contains($0.localDate) }
            return Week(start: start, workouts: inWeek.count, minutes: inWeek.reduce(0) { $0 + $1.durationMinutes })
        }
        var energy: [CyclePhase: [Int]] = [:]
        for log in logs {
            if let phase = log.cyclePhase, let before = log.energyBefore, let after = log.energyAfter {
                energy[phase, default: []].append(after - before)
            }
        }
        energyChangeByPhase = energy.mapValues { Double($0.reduce(0, +)) / Double($0.count) }
    }
}

import FitBaseCore
import Foundation

/// Statistics and series of workout logs (the fake, and the live service on the device's own logs).
enum HistoryFigures {
    static func stats(_ logs: [LoggedWorkout], today: CalendarDay, timeZone: TimeZone) -> WorkoutStats {
        let days = Set(logs.map { CalendarDay($0.log.completedAt, in: timeZone) })
        let monday = WorkoutStreaks.weekStart(of: today)
        var byType: [WorkoutType: Int] = [:]
        var byPhase: [CyclePhase: Int] = [:]
        for log in logs {
            byType[log.log.workoutType, default: 0] += 1
            if let phase = log.log.cyclePhase { byPhase[phase, default: 0] += 1 }
        }
        return WorkoutStats(
            totalWorkouts: logs.count, totalMinutes: logs.reduce(0) { $0 + $1.log.durationMinutes },
            currentStreak: WorkoutStreaks.current(days: days, today: today), longestStreak: WorkoutStreaks.longest(days: days),
            thisWeek: logs.filter { CalendarDay($0.log.completedAt, in: timeZone) >= monday }.count, byType: byType, byPhase: byPhase
        )
    }

    static func weekly(_ metric: HistoryMetric, _ logs: [LoggedWorkout], weeks: Int, today: CalendarDay, timeZone: TimeZone) -> [ChartPoint] {
        guard weeks > 0 else { return [] }
        let thisMonday = WorkoutStreaks.weekStart(of: today)
        var totals: [CalendarDay: Double] = [:]
        for log in logs {
            let week = WorkoutStreaks.weekStart(of: CalendarDay(log.log.completedAt, in: timeZone))
            totals[week, default: 0] += metric == .workouts ? 1 : Double(log.log.durationMinutes)
        }
        return (0..<weeks).reversed().map { back in
            let week = thisMonday.adding(days: -7 * back)
            return ChartPoint(day: week, value: totals[week] ?? 0)
        }
    }
}

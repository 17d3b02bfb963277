import FitBaseCore
import Foundation

/// Statistics and series of workout logs (the fake, and the live service on the device's own logs).
enum HistoryFigures {
    /// The statistics screen's totals: Core's ``HistoryStatistics``, the server's own rules, over the device's logs.
    static func stats(_ logs: [LoggedWorkout], today: CalendarDay) -> HistoryStatistics {
        HistoryStatistics(logs: logs.map(\.log), today: today)
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

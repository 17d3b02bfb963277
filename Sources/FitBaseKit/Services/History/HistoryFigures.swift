import FitBaseCore
import Foundation

/// Statistics and series of workout logs (the fake, and the live service on the device's own logs).
enum HistoryFigures {
    /// The statistics screen's figures: Core's ``HistoryStatistics``, the server's own rules, over the device's logs —
    /// with the detail only when the user's tier has ``HistoryStatistics/detailFeature`` (`nil`: it has).
    static func stats(_ logs: [LoggedWorkout], today: CalendarDay, upgradeForDetail: SubscriptionTier?) -> HistoryStatistics {
        HistoryStatistics(logs: logs.map(\.log), today: today, detailed: upgradeForDetail == nil)
    }

    /// The last `weeks` weeks of `metric` up to `today`'s, each log counted in the week of its stored local day (the
    /// day it was done where the user was, as the server keeps it), not of the device's time zone now. The weekly chart
    /// is detail: refused with the tier that unlocks it when `upgradeForDetail` is set.
    static func weekly(
        _ metric: HistoryMetric, _ logs: [LoggedWorkout], weeks: Int, today: CalendarDay, upgradeForDetail: SubscriptionTier?
    ) throws(KitError) -> [ChartPoint] {
        if let tier = upgradeForDetail { throw .upgradeRequired(tier) }
        guard weeks > 0 else { return [] }
        let thisMonday = WorkoutStreaks.weekStart(of: today)
        var totals: [CalendarDay: Double] = [:]
        for log in logs {
            totals[WorkoutStreaks.weekStart(of: log.log.localDate), default: 0] += metric == .workouts ? 1 : Double(log.log.durationMinutes)
        }
        return (0..<weeks).reversed().map { back in
            let week = thisMonday.adding(days: -7 * back)
            return ChartPoint(day: week, value: totals[week] ?? 0)
        }
    }
}

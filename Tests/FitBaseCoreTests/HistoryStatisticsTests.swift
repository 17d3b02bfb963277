import FitBaseCore
import Foundation
import Testing

/// Workout statistics from logs alone: totals, streaks, the week so far, and the detailed breakdowns.
@Suite struct HistoryStatisticsTests {
    static func log(_ day: String, minutes: Int, type: WorkoutType = .strength, phase: CyclePhase? = nil, energy: (Int, Int)? = nil) -> WorkoutLog {
        WorkoutLog(
            id: WorkoutLogID(), workout: WorkoutID(), workoutType: type, workoutTitle: "W", completedAt: .now,
            localDate: CalendarDay(day) ?? CalendarDay(daysSince1970: 0), durationMinutes: minutes, rating: nil,
            energyBefore: energy?.0, energyAfter: energy?.1, notes: nil, cyclePhase: phase, cycleDay: nil
        )
    }

    @Test func totalsStreaksAndTheWeekSoFar() throws {
        // Wednesday 2026-11-25; this week began Monday 2026-11-23.
        let today = try #require(CalendarDay("2026-11-25"))
        let logs = [
            Self.log("2026-11-10", minutes: 20), Self.log("2026-11-11", minutes: 30), Self.log("2026-11-12", minutes: 40),
            Self.log("2026-11-24", minutes: 25), Self.log("2026-11-25", minutes: 35), Self.log("2026-11-25", minutes: 10),
        ]
        let statistics = HistoryStatistics(logs: logs, today: today)
        #expect(statistics.totalWorkouts == 6)
        #expect(statistics.totalMinutes == 160)
        #expect(statistics.currentStreak == 2)
        #expect(statistics.longestStreak == 3)
        #expect(statistics.thisWeek == 3)
        #expect(statistics.weekly.count == 12)
        #expect(statistics.weekly.last == .init(start: try #require(CalendarDay("2026-11-23")), workouts: 3, minutes: 70))
        #expect(statistics.weekly.first?.start == CalendarDay("2026-09-07"))
    }

    @Test func breakdownsByTypePhaseAndEnergy() throws {
        let today = try #require(CalendarDay("2026-11-25"))
        let logs = [
            Self.log("2026-11-20", minutes: 30, type: .yoga, phase: .follicular, energy: (2, 4)),
            Self.log("2026-11-21", minutes: 30, type: .yoga, phase: .follicular, energy: (3, 4)),
            Self.log("2026-11-22", minutes: 30, type: .strength, phase: .luteal, energy: (4, 3)),
            Self.log("2026-11-23", minutes: 30, type: .strength),
        ]
        let statistics = HistoryStatistics(logs: logs, today: today)
        #expect(statistics.byType == [.yoga: 2, .strength: 2])
        #expect(statistics.byPhase == [.follicular: 2, .luteal: 1])
        #expect(statistics.energyChangeByPhase == [.follicular: 1.5, .luteal: -1])
    }

    /// Without the detail's feature the detail is not computed at all, and the totals stay the same.
    @Test func basicStatisticsLeaveTheDetailUncomputed() throws {
        let today = try #require(CalendarDay("2026-11-25"))
        let logs = [Self.log("2026-11-24", minutes: 25, type: .yoga, phase: .luteal, energy: (2, 4)), Self.log("2026-11-25", minutes: 35)]
        let basic = HistoryStatistics(logs: logs, today: today, detailed: false)
        #expect(basic == HistoryStatistics(logs: logs, today: today).basic)
        #expect(basic.totalWorkouts == 2 && basic.byType.isEmpty && basic.weekly.isEmpty && basic.energyChangeByPhase.isEmpty)
        #expect(HistoryStatistics.detailFeature == .analytics)
    }
}

import FitBaseCore
import Foundation

/// An in-memory ``HistoryService``: logs are checked by the server's rules against the catalog fake, and the
/// statistics and series are computed from them, so logging a workout moves the streak and the chart.
public actor FakeHistoryService: HistoryService {
    /// Latency and failures (operation names: `log`, `history`, `deleteLog`, `stats`, `weeklySeries`).
    public nonisolated let knobs = FakeKnobs()
    private let clock: any KitClock
    private let timeZone: TimeZone
    private let catalog: FakeCatalogService
    private var logs: [LoggedWorkout]

    /// A fake starting with `logs`, checking workouts against `catalog`.
    public init(logs: [LoggedWorkout] = [], catalog: FakeCatalogService, timeZone: TimeZone = .gmt, clock: any KitClock = SystemKitClock()) {
        self.logs = logs
        self.catalog = catalog
        self.timeZone = timeZone
        self.clock = clock
    }

    public func log(_ completion: WorkoutCompletion) async throws(KitError) -> LoggedWorkout {
        try await knobs.enter("log", clock: clock)
        let workout = await catalog.catalog.first { $0.id.description == completion.workoutID.lowercased() }
        let draft = WorkoutLogDraft(
            workoutId: completion.workoutID, completedAt: completion.completedAt, duration: completion.durationMinutes, rating: completion.rating,
            energyBefore: completion.energyBefore, energyAfter: completion.energyAfter, notes: completion.notes
        )
        do throws(InvalidFields) {
            _ = try WorkoutLogRules.checked(draft, workout: workout, now: clock.now)
        } catch {
            throw KitError(error)
        }
        let logged = LoggedWorkout(
            id: UUID().uuidString.lowercased(), completion: completion, workoutTitle: workout?.title, workoutType: workout?.type,
            cyclePhase: nil
        )
        logs.append(logged)
        return logged
    }

    public func history() async throws(KitError) -> [LoggedWorkout] {
        try await knobs.enter("history", clock: clock)
        return logs.sorted { ($0.completion.completedAt, $0.id) > ($1.completion.completedAt, $1.id) }
    }

    public func deleteLog(id: String) async throws(KitError) {
        try await knobs.enter("deleteLog", clock: clock)
        logs.removeAll { $0.id == id }
    }

    public func stats() async throws(KitError) -> WorkoutStats {
        try await knobs.enter("stats", clock: clock)
        return HistoryFigures.stats(logs, today: CalendarDay(clock.now, in: timeZone), timeZone: timeZone)
    }

    public func weeklySeries(_ metric: HistoryMetric, weeks: Int) async throws(KitError) -> [ChartPoint] {
        try await knobs.enter("weeklySeries", clock: clock)
        return HistoryFigures.weekly(metric, logs, weeks: weeks, today: CalendarDay(clock.now, in: timeZone), timeZone: timeZone)
    }
}

/// Statistics and series of workout logs (the fake, and the live service on the device's own logs).
enum HistoryFigures {
    static func stats(_ logs: [LoggedWorkout], today: CalendarDay, timeZone: TimeZone) -> WorkoutStats {
        let days = Set(logs.map { CalendarDay($0.completion.completedAt, in: timeZone) })
        let monday = WorkoutStreaks.weekStart(of: today)
        var byType: [WorkoutType: Int] = [:]
        var byPhase: [CyclePhase: Int] = [:]
        for log in logs {
            if let type = log.workoutType { byType[type, default: 0] += 1 }
            if let phase = log.cyclePhase { byPhase[phase, default: 0] += 1 }
        }
        return WorkoutStats(
            totalWorkouts: logs.count, totalMinutes: logs.reduce(0) { $0 + $1.completion.durationMinutes },
            currentStreak: WorkoutStreaks.current(days: days, today: today), longestStreak: WorkoutStreaks.longest(days: days),
            thisWeek: logs.filter { CalendarDay($0.completion.completedAt, in: timeZone) >= monday }.count, byType: byType, byPhase: byPhase
        )
    }

    static func weekly(_ metric: HistoryMetric, _ logs: [LoggedWorkout], weeks: Int, today: CalendarDay, timeZone: TimeZone) -> [ChartPoint] {
        guard weeks > 0 else { return [] }
        let thisMonday = WorkoutStreaks.weekStart(of: today)
        var totals: [CalendarDay: Double] = [:]
        for log in logs {
            let week = WorkoutStreaks.weekStart(of: CalendarDay(log.completion.completedAt, in: timeZone))
            totals[week, default: 0] += metric == .workouts ? 1 : Double(log.completion.durationMinutes)
        }
        return (0..<weeks).reversed().map { back in
            let week = thisMonday.adding(days: -7 * back)
            return ChartPoint(day: week, value: totals[week] ?? 0)
        }
    }
}

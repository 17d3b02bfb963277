import FitBaseCore
import Foundation

/// An in-memory ``HistoryService``: logs are checked by the server's rules against the catalog fake, and the
/// statistics and series are computed from them, so logging a workout moves the streak and the chart. Over a billing
/// fake, the detail and the chart need ``HistoryStatistics/detailFeature``, as the live service.
public actor FakeHistoryService: HistoryService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case log, history, deleteLog, stats, weeklySeries
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeHistoryService")
    private let clock: any KitClock
    private let timeZone: TimeZone
    private let catalog: FakeCatalogService
    private let billing: FakeBillingService?
    private var logs: [LoggedWorkout]

    /// A fake starting with `logs`, checking workouts against `catalog`, its detail gated by the tier of `billing`
    /// (none: every feature).
    public init(
        logs: [LoggedWorkout] = [], catalog: FakeCatalogService, billing: FakeBillingService? = nil, timeZone: TimeZone = .gmt,
        clock: any KitClock = SystemKitClock()
    ) {
        self.logs = logs
        self.catalog = catalog
        self.billing = billing
        self.timeZone = timeZone
        self.clock = clock
    }

    /// The logs, read by the other fakes as the server's services read them (not an operation).
    var workoutLogs: [WorkoutLog] { logs.map(\.log) }

    public func log(_ completion: WorkoutCompletion) async throws(KitError) -> LoggedWorkout {
        try await knobs.enter(.log, clock: clock)
        let workout = await catalog.catalog.first { $0.id == completion.workoutID }
        let logged = LoggedWorkout(log: try completion.log(of: workout, now: clock.now, timeZone: timeZone))
        logs.append(logged)
        return logged
    }

    public func history() async throws(KitError) -> [LoggedWorkout] {
        try await knobs.enter(.history, clock: clock)
        return logs.sorted { ($0.log.completedAt, $0.id.description) > ($1.log.completedAt, $1.id.description) }
    }

    public func deleteLog(id: WorkoutLogID) async throws(KitError) {
        try await knobs.enter(.deleteLog, clock: clock)
        logs.removeAll { $0.id == id }
    }

    public func stats() async throws(KitError) -> HistoryStatistics {
        try await knobs.enter(.stats, clock: clock)
        let upgrade = await billing?.requiresUpgrade(for: HistoryStatistics.detailFeature)
        return HistoryFigures.stats(logs, today: CalendarDay(clock.now, in: timeZone), upgradeForDetail: upgrade)
    }

    public func weeklySeries(_ metric: HistoryMetric, weeks: Int) async throws(KitError) -> [ChartPoint] {
        try await knobs.enter(.weeklySeries, clock: clock)
        let upgrade = await billing?.requiresUpgrade(for: HistoryStatistics.detailFeature)
        return try HistoryFigures.weekly(metric, logs, weeks: weeks, today: CalendarDay(clock.now, in: timeZone), upgradeForDetail: upgrade)
    }
}

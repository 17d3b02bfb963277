import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``HistoryService`` over the synced `workoutLogs` collection: logs are saved on the device at once (sealed, offline)
/// and reach the server with the next sync; statistics and series are computed from the device's logs, their detail
/// only for a tier with ``HistoryStatistics/detailFeature`` (as the server's ``getHistoryStats``). A log or a deletion
/// marks the recommendations kept on the device as old.
public struct LiveHistoryService: HistoryService {
    let engine: SyncEngine
    let catalog: any CatalogService
    let billing: any BillingService
    let recommendations: RecommendationInputs
    let clock: any KitClock
    let timeZone: @Sendable () -> TimeZone
    /// Reports `workout_synced` (`workout_completed` and `workout_failed` are the screen's: ``WorkoutDetailModel``).
    let syncTracker: WorkoutSyncTracker

    public func log(_ completion: WorkoutCompletion) async throws(KitError) -> LoggedWorkout {
        // The log carries the workout's type and title, so the catalog (its copy on the device when offline) must know
        // the workout; one it has never seen cannot be logged offline.
        let workout: CatalogWorkout?
        do throws(KitError) {
            workout = try await catalog.workout(id: completion.workoutID, policy: .cacheFirst).value.workout
        } catch where error.kind == .notFound {
            workout = nil
        }
        let log = try completion.log(of: workout, now: clock.now, timeZone: timeZone())
        try await storage { try await engine.history.save(log) }
        await recommendations.changed()
        await syncTracker.logged(log.id)
        return LoggedWorkout(log: log, isPendingSync: true)
    }

    public func history() async throws(KitError) -> [LoggedWorkout] {
        let entries = try await storage { try await engine.history.history() }
        let pending = try await storage { try await engine.store.pendingRecordIDs(of: .workoutLogs) }
        return entries.map { LoggedWorkout(log: $0, isPendingSync: pending.contains($0.id.description)) }
    }

    public func deleteLog(id: WorkoutLogID) async throws(KitError) {
        try await storage { try await engine.history.delete(id) }
        await recommendations.changed()
    }

    public func stats() async throws(KitError) -> HistoryStatistics {
        let upgrade = await billing.requiresUpgrade(for: HistoryStatistics.detailFeature)
        return HistoryFigures.stats(try await history(), today: CalendarDay(clock.now, in: timeZone()), upgradeForDetail: upgrade)
    }

    public func weeklySeries(_ metric: HistoryMetric, weeks: Int) async throws(KitError) -> [ChartPoint] {
        let upgrade = await billing.requiresUpgrade(for: HistoryStatistics.detailFeature)
        return try HistoryFigures.weekly(
            metric, try await history(), weeks: weeks, today: CalendarDay(clock.now, in: timeZone()), upgradeForDetail: upgrade)
    }
}

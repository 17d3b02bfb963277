import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``HistoryService`` over the synced `workoutLogs` collection: logs are saved on the device at once (sealed, offline)
/// and reach the server with the next sync; statistics and series are computed from the device's logs.
public struct LiveHistoryService: HistoryService {
    let engine: SyncEngine
    let catalog: any CatalogService
    let clock: any KitClock
    let timeZone: @Sendable () -> TimeZone
    /// Reports `workout_synced` (`workout_completed` and `workout_failed` are the screen's: ``WorkoutDetailModel``).
    let syncTracker: WorkoutSyncTracker

    public func log(_ completion: WorkoutCompletion) async throws(KitError) -> LoggedWorkout {
        // The catalog names the workout; offline and never seen, the server checks it when the log syncs.
        var workout: CatalogWorkout?
        var known = true
        do throws(KitError) {
            workout = try await catalog.workout(id: completion.workoutID, policy: .cacheFirst).value.workout
        } catch where error.kind == .offline {
            known = false
        } catch where error.kind == .notFound {
            workout = nil
        }
        let draft = WorkoutLogDraft(
            workoutId: completion.workoutID, completedAt: completion.completedAt, duration: completion.durationMinutes, rating: completion.rating,
            energyBefore: completion.energyBefore, energyAfter: completion.energyAfter, notes: completion.notes
        )
        do throws(InvalidFields) {
            _ = try WorkoutLogRules.checked(draft, workout: known ? workout : Self.unverified(completion.workoutID), now: clock.now)
        } catch {
            throw KitError(error)
        }
        let entry = WorkoutLogEntry(
            workoutId: completion.workoutID, completedAt: completion.completedAt, duration: completion.durationMinutes, rating: completion.rating,
            energyBefore: completion.energyBefore, energyAfter: completion.energyAfter, notes: completion.notes
        )
        try await storage { try await engine.history.save(entry) }
        await syncTracker.logged(entry.id)
        return LoggedWorkout(
            id: entry.id, completion: completion, workoutTitle: workout?.title, workoutType: workout?.type, cyclePhase: nil, isPendingSync: true)
    }

    /// A stand-in for a workout the device cannot look up while offline, so the log's other rules are still checked.
    private static func unverified(_ id: String) -> CatalogWorkout {
        CatalogWorkout(
            id: WorkoutID(id) ?? WorkoutID(), title: "", description: "", type: .strength, durationMinutes: 1, intensity: .low, phases: [], equipment: [],
            thumbnailURL: "", videoURL: "", instructorName: "", tags: [], isFeatured: false, isPremium: false, targetAreas: [], benefits: []
        )
    }

    public func history() async throws(KitError) -> [LoggedWorkout] {
        let entries = try await storage { try await engine.history.history() }
        let pending = try await storage { try await engine.store.pendingRecordIDs(of: .workoutLogs) }
        return entries.map { LoggedWorkout($0, pending: pending.contains($0.id)) }
    }

    public func deleteLog(id: String) async throws(KitError) {
        try await storage { try await engine.history.delete(id) }
    }

    public func stats() async throws(KitError) -> WorkoutStats {
        HistoryFigures.stats(try await history(), today: CalendarDay(clock.now, in: timeZone()), timeZone: timeZone())
    }

    public func weeklySeries(_ metric: HistoryMetric, weeks: Int) async throws(KitError) -> [ChartPoint] {
        HistoryFigures.weekly(metric, try await history(), weeks: weeks, today: CalendarDay(clock.now, in: timeZone()), timeZone: timeZone())
    }
}

extension LoggedWorkout {
    init(_ entry: WorkoutLogEntry, pending: Bool) {
        self.init(
            id: entry.id,
            completion: WorkoutCompletion(
                workoutID: entry.workoutId, completedAt: entry.completedAt, durationMinutes: entry.duration, rating: entry.rating,
                energyBefore: entry.energyBefore, energyAfter: entry.energyAfter, notes: entry.notes
            ),
            workoutTitle: entry.workoutTitle, workoutType: entry.workoutType.flatMap(WorkoutType.init(rawValue:)),
            cyclePhase: entry.cyclePhase.flatMap(CyclePhase.init(rawValue:)), isPendingSync: pending
        )
    }
}

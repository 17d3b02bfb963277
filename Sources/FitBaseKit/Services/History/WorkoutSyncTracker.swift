import FitBaseClient
import FitBaseCore
import Foundation

/// Reports `workout_synced` for each workout logged on this device once its sync settles: `succeeded: true` when the
/// server took it, `false` when it refused it (the engine's ``SyncEngine/rejections``). A log still waiting when the
/// app quits is not reported.
actor WorkoutSyncTracker {
    private let engine: SyncEngine
    private let analytics: any AnalyticsService
    private var awaiting: Set<WorkoutLogID> = []
    private var watcher: Task<Void, Never>?

    init(engine: SyncEngine, analytics: any AnalyticsService) {
        self.engine = engine
        self.analytics = analytics
    }

    deinit {
        watcher?.cancel()
    }

    /// The workout log `id` was saved on the device and waits for its sync.
    func logged(_ id: WorkoutLogID) async {
        awaiting.insert(id)
        if watcher == nil {
            // Subscribed before the first check, so a sync that ends in between is still seen.
            let updates = await engine.statusUpdates()
            watcher = Task { [weak self] in
                for await _ in updates { await self?.settle() }
            }
        }
        await settle()
    }

    /// Reports every awaited log that is no longer pending.
    private func settle() async {
        guard !awaiting.isEmpty, let pending = try? await engine.store.pendingRecordIDs(of: .workoutLogs) else { return }
        let refused = Set(await engine.rejections.filter { $0.collection == .workoutLogs }.compactMap { WorkoutLogID($0.recordID) })
        let settled = awaiting.filter { !pending.contains($0.description) }
        for id in settled where awaiting.remove(id) != nil {
            analytics.track(.workoutSynced(succeeded: !refused.contains(id)))
        }
    }
}

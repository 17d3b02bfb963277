import FitBaseClient
import FitBaseCore
import Foundation

/// What the device knows of the inputs the server's recommendations rest on: logging, editing or deleting a period, a
/// fertility signal or a workout here marks every recommendation kept on the device as older than them, so the next
/// load asks the server again — after sending what it rests on and still waits to sync (``LiveRecommendationService``).
/// The mark is kept in the local store, so it outlives a relaunch.
struct RecommendationInputs: Sendable {
    let engine: SyncEngine
    let clock: any KitClock

    /// The collections the server's recommendations read.
    static let collections: [SyncCollection] = [.cycleLogs, .cycleSignals, .workoutLogs]
    /// Where the last change's time is kept (not under `recommendations:`, which a purchase empties).
    static let key = "recommendation-inputs:changed"

    /// Something recommendations rest on changed on the device just now.
    func changed() async {
        try? await engine.store.storeCachedResponse(.init(body: Data(), etag: nil, fetchedAt: clock.now), for: Self.key)
    }

    /// Whether the answer kept under `key` is older than the last change (or missing while there is one): the server
    /// must be asked again, and told first.
    func outdate(_ key: String) async -> Bool {
        guard let changed = try? await engine.store.cachedResponse(Self.key) else { return false }
        guard let kept = try? await engine.store.cachedResponse(key) else { return true }
        // Kept at the very instant of the change: it may not have seen it.
        return kept.fetchedAt <= changed.fetchedAt
    }

    /// Sends what recommendations rest on and still waits to sync, so the server answers with it; a failure (offline)
    /// leaves the answer to the cache's rules (the device's copy, stale).
    func send() async {
        for collection in Self.collections {
            guard let pending = try? await engine.store.pendingRecordIDs(of: collection), !pending.isEmpty else { continue }
            try? await engine.pushPending()
            return
        }
    }
}

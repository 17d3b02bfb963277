import FitBaseCore
import Synchronization

/// Catalog workouts by id, each read at most once: a pushed batch validates hundreds of records that name the same
/// few workouts.
final class CatalogLookup: Sendable {
    private let store: CatalogStore
    private let known = Mutex<[WorkoutID: CatalogWorkout?]>([:])

    init(store: CatalogStore) {
        self.store = store
    }

    func workout(_ id: WorkoutID) async throws -> CatalogWorkout? {
        if let hit = known.withLock({ $0[id] }) { return hit }
        let found = try await store.workout(id)
        known.withLock { $0[id] = found }
        return found
    }
}

extension CatalogLookup {
    /// The one lookup of a push, shared by every collection whose records name workouts.
    static func shared(by reads: PushReads, store: CatalogStore) async throws -> CatalogLookup {
        try await reads.once("catalog.lookup") { CatalogLookup(store: store) }
    }
}

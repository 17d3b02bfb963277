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

    /// Which of `ids` the catalog holds: those not looked up before are read together, from one catalog snapshot.
    func existing(_ ids: Set<WorkoutID>) async throws -> Set<WorkoutID> {
        let unknown = known.withLock { known in ids.filter { known[$0] == nil } }
        if !unknown.isEmpty {
            let found = try await store.workouts(unknown)
            known.withLock { known in
                for id in unknown { known[id] = found[id] }
            }
        }
        return known.withLock { known in ids.filter { known[$0].flatMap { $0 } != nil } }
    }
}

extension CatalogLookup {
    /// The one lookup of a push, shared by every collection whose records name workouts.
    static func shared(by reads: PushReads, store: CatalogStore) async throws -> CatalogLookup {
        try await reads.once("catalog.lookup") { CatalogLookup(store: store) }
    }
}

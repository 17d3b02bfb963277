import FitBaseCore
import Synchronization

/// What other features do when a workout leaves the catalog, after the transaction that deleted it (media removes the
/// workout's stored files). The catalog calls ``deleted(_:)`` from each way a workout is deleted (the admin API, the
/// console) without knowing who listens; listeners register while the features are built.
final class WorkoutDeletions: Sendable {
    private let listeners = Mutex<[@Sendable (WorkoutID) async -> Void]>([])

    /// Calls `listener` after each workout deleted from now on.
    func observe(_ listener: @escaping @Sendable (WorkoutID) async -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// Tells every listener that `workout` was deleted.
    func deleted(_ workout: WorkoutID) async {
        for listener in listeners.withLock({ $0 }) { await listener(workout) }
    }
}

import FitBaseCore
import Foundation
import SQLKit
import Synchronization

/// What other features do when a workout leaves the catalog, in the transaction that deletes it (media queues the
/// removal of the workout's stored files). ``CatalogStore/delete(_:engine:deletions:now:on:)``, the one way a workout is
/// deleted (the admin API and the console both go through it), tells the listeners without knowing who they are;
/// listeners register while the features are built.
final class WorkoutDeletions: Sendable {
    typealias Listener = @Sendable (_ workout: WorkoutID, _ now: Date, _ db: any SQLDatabase) async throws -> Void

    private let listeners = Mutex<[Listener]>([])

    /// Calls `listener` in the transaction of each workout deleted from now on; a throw rolls the deletion back.
    func observe(_ listener: @escaping Listener) {
        listeners.withLock { $0.append(listener) }
    }

    /// Tells every listener that `workout` is being deleted in the transaction `db`.
    func deleted(_ workout: WorkoutID, now: Date, on db: any SQLDatabase) async throws {
        for listener in listeners.withLock({ $0 }) { try await listener(workout, now, db) }
    }
}

import FitBaseClient
import FitBaseCore
import Foundation

/// Training plans (seed 000), offline-first: reads never wait for the network, writes are saved on the device and
/// reach the server with the next sync; conflicts are settled by the server's policy.
public protocol PlanService: Sendable {
    /// The user's plans, latest start first.
    func plans() async throws(KitError) -> [TrainingPlan]
    /// One plan, if the device has it.
    func plan(id: PlanID) async throws(KitError) -> TrainingPlan?
    /// Saves a new or changed plan; returns it as saved.
    func save(_ plan: TrainingPlan) async throws(KitError) -> TrainingPlan
    /// Deletes a plan.
    func delete(id: PlanID) async throws(KitError)
    /// Syncs now (pull to refresh).
    func syncNow() async throws(KitError)
    /// Where syncing stands, now and at every change (for a status line or badge).
    func syncStatus() async -> AsyncStream<SyncStatus>
}

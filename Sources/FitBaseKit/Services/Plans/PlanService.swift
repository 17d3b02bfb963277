import FitBaseClient
import FitBaseCore
import Foundation

/// Training plans (seed 000), offline-first: reads never wait for the network, writes are saved on the device and
/// reach the server with the next sync; conflicts are settled by the server's policy. Progressive suggestions for a
/// plan's next week come from the server.
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
    /// The sessions of week `week` of plan `id` (by default the week after the one holding today) adjusted from the
    /// user's recent completion, ratings and energy and the predicted phases (``PlanProgression``): the
    /// `advancedProgression` feature. Asks the server, so a plan must have synced first. Fails with
    /// `.upgradeRequired` (and the tier) without the feature, `.notFound` for a plan the server does not have, and
    /// `.invalidInput` naming `week` for a week the plan does not have.
    func progression(of id: PlanID, week: Int?) async throws(KitError) -> PlanProgression.Suggestion
}

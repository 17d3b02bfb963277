import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``PlanService``. Saves are "pending" until ``syncNow()`` (or at once with `autoSync`), so previews can
/// show the pending badge and the syncing state.
public actor FakePlanService: PlanService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case plans, plan, save, delete, syncNow
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakePlanService")
    private let clock: any KitClock
    private let catalog: FakeCatalogService?
    private let billing: FakeBillingService?
    private var stored: [PlanID: TrainingPlan]
    private var pending: Set<PlanID> = []
    private var status: SyncStatus
    private let observers = ValueStreams<SyncStatus>()

    /// A fake starting with `plans`, all synced; plans may name only workouts of `catalog` (when given), and beyond
    /// ``PlanRules/plansWithoutCustomPlans`` need `billing`'s tier to include `customPlans` (when given).
    public init(
        plans: [TrainingPlan] = [], catalog: FakeCatalogService? = nil, billing: FakeBillingService? = nil, clock: any KitClock = SystemKitClock()
    ) {
        self.catalog = catalog
        self.billing = billing
        self.stored = Dictionary(plans.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        self.clock = clock
        self.status = SyncStatus(state: .idle, pendingCount: 0, lastSyncedAt: plans.isEmpty ? nil : clock.now)
    }

    public func plans() async throws(KitError) -> [TrainingPlan] {
        try await knobs.enter(.plans, clock: clock)
        return stored.values.sorted { ($0.startDate, $0.id.description) > ($1.startDate, $1.id.description) }
    }

    public func plan(id: PlanID) async throws(KitError) -> TrainingPlan? {
        try await knobs.enter(.plan, clock: clock)
        return stored[id]
    }

    public func save(_ plan: TrainingPlan) async throws(KitError) -> TrainingPlan {
        try await knobs.enter(.save, clock: clock)
        let draft = PlanDraft(plan)
        let known = await catalog?.catalog.map(\.id)
        do throws(InvalidFields) {
            try PlanRules.checkSize(draft)
            if let known {
                _ = try PlanRules.checked(draft, id: plan.id, inCatalog: Set(known))
            } else {
                let errors = PlanRules.fieldErrors(draft)
                if !errors.isEmpty { throw InvalidFields(errors) }
            }
        } catch {
            throw KitError(error)
        }
        if stored[plan.id] == nil, PlanRules.anotherPlanNeedsCustomPlans(keeping: stored.count), let tier = await billing?.requiresUpgrade(for: .customPlans) {
            throw .upgradeRequired(tier)
        }
        stored[plan.id] = plan
        pending.insert(plan.id)
        publish(state: .idle)
        return plan
    }

    public func delete(id: PlanID) async throws(KitError) {
        try await knobs.enter(.delete, clock: clock)
        guard stored.removeValue(forKey: id) != nil else { return }
        pending.insert(id)
        publish(state: .idle)
    }

    public func syncNow() async throws(KitError) {
        publish(state: .syncing)
        do throws(KitError) {
            try await knobs.enter(.syncNow, clock: clock)
        } catch {
            publish(state: error.kind == .offline ? .offline : .error(error.message))
            throw error
        }
        pending = []
        status.lastSyncedAt = clock.now
        publish(state: .idle)
    }

    public func syncStatus() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = observers.make(buffer: 8)
        continuation.yield(status)
        return stream
    }

    private func publish(state: SyncStatus.State) {
        status.state = state
        status.pendingCount = pending.count
        observers.send(status)
    }
}

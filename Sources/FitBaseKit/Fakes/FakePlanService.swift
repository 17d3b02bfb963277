import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``PlanService``. Saves are "pending" until ``syncNow()`` (or at once with `autoSync`), so previews can
/// show the pending badge and the syncing state. Suggestions for a week are FitBase's own ``PlanProgression`` over the
/// history, cycle and profile fakes, for an entitlement with `advancedProgression` only — as the server makes them.
public actor FakePlanService: PlanService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case plans, plan, save, delete, syncNow, progression
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakePlanService")
    private let clock: any KitClock
    private let catalog: FakeCatalogService?
    private let billing: FakeBillingService?
    private let history: FakeHistoryService?
    private let cycle: FakeCycleService?
    private let profile: FakeProfileService?
    private let timeZone: TimeZone
    private var stored: [PlanID: TrainingPlan]
    private var pending: Set<PlanID> = []
    /// The plans the "server" has: the ones the fake started with and those of the last sync.
    private var synced: Set<PlanID>
    private var status: SyncStatus
    private let observers = ValueStreams<SyncStatus>()

    /// A fake starting with `plans`, all synced; plans may name only workouts of `catalog` (when given), and beyond
    /// ``PlanRules/plansWithoutCustomPlans`` need `billing`'s tier to include `customPlans` (when given). Suggestions
    /// read the logs of `history`, the phases of `cycle` and the equipment of `profile` (each when given), with days
    /// counted in `timeZone`.
    public init(
        plans: [TrainingPlan] = [], catalog: FakeCatalogService? = nil, billing: FakeBillingService? = nil, history: FakeHistoryService? = nil,
        cycle: FakeCycleService? = nil, profile: FakeProfileService? = nil, timeZone: TimeZone = .gmt, clock: any KitClock = SystemKitClock()
    ) {
        self.catalog = catalog
        self.billing = billing
        self.history = history
        self.cycle = cycle
        self.profile = profile
        self.timeZone = timeZone
        self.stored = Dictionary(plans.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        self.synced = Set(plans.map(\.id))
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
        synced = Set(stored.keys)
        status.lastSyncedAt = clock.now
        publish(state: .idle)
    }

    /// As the server answers: a plan that has not synced yet is not found; without `advancedProgression` (the billing
    /// fake's tier; none given: allowed) the tier that unlocks it.
    public func progression(of id: PlanID, week: Int?) async throws(KitError) -> PlanProgression.Suggestion {
        try await knobs.enter(.progression, clock: clock)
        guard let plan = stored[id], synced.contains(id) else {
            throw KitError(.notFound, message: "This plan has not reached the server yet.", code: .notFound)
        }
        if let tier = await billing?.requiresUpgrade(for: .advancedProgression) { throw .upgradeRequired(tier) }
        let today = CalendarDay(clock.now, in: timeZone)
        let logs = await history?.workoutLogs ?? []
        let workouts = await catalog?.catalog ?? []
        let entitled = await catalog?.premiumEntitled() ?? false
        let prediction = await cycle?.prediction
        let equipment = await profile?.signedInProfile?.availableEquipment
        do throws(InvalidFields) {
            let week = try PlanProgression.week(week, planStart: plan.startDate, weekCount: plan.weeklyWorkouts.count, today: today)
            return try PlanProgression.suggestion(.init(
                plan: plan, week: week, today: today, logs: logs, catalog: workouts, isEntitledToPremium: entitled, prediction: prediction,
                equipment: equipment.map(Set.init)
            ))
        } catch {
            throw KitError(error)
        }
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

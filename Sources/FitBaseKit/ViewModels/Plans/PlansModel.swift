import FitBaseClient
import FitBaseCore
import Foundation
import Observation

/// Training plans (seed 000), offline-first: the device's plans show at once, changes are saved on the device and
/// synced after, and a status line says where syncing stands. Creating a plan is a custom plan (Pro).
@MainActor @Observable
public final class PlansModel {
    /// The plan editor's answers.
    public struct Draft: Sendable, Equatable {
        /// The plan edited; `nil` for a new plan.
        public var id: PlanID?
        public var name: String
        public var notes: String
        public var startDate: CalendarDay
        public var daysPerWeek: Int
        public var weeklyWorkouts: [TrainingPlan.Week]
        public var isCompleted: Bool

        /// A new plan starting `startDate`, or `plan`'s answers.
        public init(
            id: PlanID? = nil, name: String = "", notes: String = "", startDate: CalendarDay, daysPerWeek: Int = 3, weeklyWorkouts: [TrainingPlan.Week] = [],
            isCompleted: Bool = false
        ) {
            self.id = id
            self.name = name
            self.notes = notes
            self.startDate = startDate
            self.daysPerWeek = daysPerWeek
            self.weeklyWorkouts = weeklyWorkouts
            self.isCompleted = isCompleted
        }
    }

    /// The plans, latest start first.
    public private(set) var plans: [TrainingPlan] = []
    /// Where syncing stands (`nil` until the first status arrives).
    public private(set) var syncStatus: SyncStatus?
    public private(set) var isLoading = false
    public private(set) var isSyncing = false
    public private(set) var error: ScreenError?
    /// Set when creating a plan needs a higher tier: present the paywall with it.
    public private(set) var paywall: UpgradePrompt?
    /// The editor's answers; `nil` while it is closed.
    public var draft: Draft?
    public private(set) var fieldErrors: [String: String] = [:]

    private let service: any PlanService
    private let billing: any BillingService
    private let analytics: any AnalyticsService
    private let clock: any KitClock
    @ObservationIgnored private var loaded = false
    @ObservationIgnored private var statusTask: Task<Void, Never>?

    /// A model over the services of `dependencies`.
    public init(dependencies: FitBaseDependencies) {
        service = dependencies.plans
        billing = dependencies.billing
        analytics = dependencies.analytics
        clock = dependencies.clock
    }

    /// Loaded, with no plans yet.
    public var isEmpty: Bool { loaded && plans.isEmpty }
    /// Changes wait to reach the server.
    public var hasPendingChanges: Bool { (syncStatus?.pendingCount ?? 0) > 0 }
    /// The server could not be reached at the last sync.
    public var isOffline: Bool { syncStatus?.state == .offline }

    /// Shows the device's plans at once, follows the sync status, then syncs in the background of the call.
    public func appear() async {
        await loadLocal()
        if statusTask == nil {
            let updates = await service.syncStatus()
            statusTask = Task { [weak self] in
                for await status in updates {
                    guard let self, !Task.isCancelled else { return }
                    self.syncStatus = status
                }
            }
        }
        await sync()
    }

    /// Stops following the sync status.
    public func disappear() {
        statusTask?.cancel()
        statusTask = nil
    }

    /// Reads the device's plans (never waits for the network).
    public func loadLocal() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            plans = try await service.plans()
            loaded = true
            error = nil
        } catch {
            present(error)
        }
    }

    /// Syncs now (pull to refresh); being offline is shown by the status, not as an error.
    public func sync() async {
        isSyncing = true
        defer { isSyncing = false }
        do throws(KitError) {
            try await service.syncNow()
        } catch {
            if error.kind != .offline { present(error) }
            analytics.track(.operationFailed(feature: .sync, reason: error.kind))
            return
        }
        await loadLocal()
    }

    /// Opens the editor for a new plan, unless it would be one more than the user's tier keeps (every tier keeps
    /// ``PlanRules/plansWithoutCustomPlans``; more are `customPlans`, as the server counts them).
    public func create() async {
        if PlanRules.anotherPlanNeedsCustomPlans(keeping: plans.count), let tier = await billing.requiresUpgrade(for: .customPlans) {
            paywall = UpgradePrompt(requiredTier: tier, feature: .customPlans)
            return
        }
        let start = WorkoutStreaks.weekStart(of: CalendarDay(clock.now, in: .current))
        draft = Draft(startDate: start)
        fieldErrors = [:]
    }

    /// Opens the editor on `plan`.
    public func edit(_ plan: TrainingPlan) {
        draft = Draft(
            id: plan.id, name: plan.name, notes: plan.notes ?? "", startDate: plan.startDate,
            daysPerWeek: plan.daysPerWeek, weeklyWorkouts: plan.weeklyWorkouts, isCompleted: plan.isCompleted
        )
        fieldErrors = [:]
    }

    /// Closes the editor without saving.
    public func cancelEditing() {
        draft = nil
        fieldErrors = [:]
    }

    /// The paywall was dismissed.
    public func dismissPaywall() {
        paywall = nil
    }

    /// The editor's problems by field (``PlanRules``, as the server checks them); empty when it may be saved.
    public func problems(of draft: Draft) -> [String: String] {
        Dictionary(PlanRules.fieldErrors(PlanDraft(plan(of: draft))).map { ($0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
    }

    /// The plan the editor's answers make.
    private func plan(of draft: Draft) -> TrainingPlan {
        let notes = draft.notes.trimmingCharacters(in: .whitespacesAndNewlines)
        return TrainingPlan(
            id: draft.id ?? PlanID(), name: draft.name.trimmingCharacters(in: .whitespacesAndNewlines), notes: notes.isEmpty ? nil : notes,
            startDate: draft.startDate, daysPerWeek: draft.daysPerWeek, isCompleted: draft.isCompleted, weeklyWorkouts: draft.weeklyWorkouts
        )
    }

    /// Saves the editor's plan on the device (it shows at once), then syncs.
    public func save() async {
        guard let draft else { return }
        fieldErrors = problems(of: draft)
        guard fieldErrors.isEmpty else {
            error = .invalid(fieldErrors)
            return
        }
        let plan = plan(of: draft)
        do throws(KitError) {
            let saved = try await service.save(plan)
            plans.removeAll { $0.id == saved.id }
            plans.insert(saved, at: 0)
            self.draft = nil
            error = nil
            analytics.track(.planSaved)
        } catch {
            present(error)
            fieldErrors = error.fieldErrors
            return
        }
        await sync()
    }

    /// Deletes a plan on the device (it goes at once), then syncs.
    public func delete(_ plan: TrainingPlan) async {
        do throws(KitError) {
            try await service.delete(id: plan.id)
            plans.removeAll { $0.id == plan.id }
        } catch {
            return present(error)
        }
        await sync()
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure, feature: .customPlans)
        if let upgrade = error?.upgrade { paywall = upgrade }
        analytics.track(.operationFailed(feature: .plans, reason: failure.kind))
    }
}

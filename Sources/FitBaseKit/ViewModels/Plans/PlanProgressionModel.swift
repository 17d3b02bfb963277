import FitBaseCore
import Foundation
import Observation

/// A plan's next week adjusted to how training went (seed 000's `advancedProgression`, Premium): each session with
/// what to do — progress, keep, reduce or swap — the workout and minutes, and why, plus the weeks it rests on. The
/// server decides (``PlanProgression``) and says whether the user's tier includes it: a tier without it gets the
/// upgrade prompt from the server's answer.
@MainActor @Observable
public final class PlanProgressionModel {
    /// One session as the screen lists it.
    public struct Row: Sendable, Equatable, Identifiable {
        /// Its place in the week's sessions.
        public var id: Int
        public var session: PlanProgression.Session
        /// The workout the plan names (`nil` when it is no longer in the catalog).
        public var planned: CatalogWorkout?
        /// The workout to do instead, when it differs.
        public var suggested: CatalogWorkout?

        /// What the session does.
        public var action: PlanProgression.Action { session.action }
        /// The workout to do: the suggested one, else the planned one.
        public var workout: CatalogWorkout? { suggested ?? planned }
    }

    /// The plan's id.
    public let planID: PlanID
    /// The suggested week (`nil` until loaded).
    public private(set) var suggestion: PlanProgression.Suggestion?
    /// Its sessions with their workouts.
    public private(set) var rows: [Row] = []
    /// How many weeks the plan has (`nil` until the device's plan is read).
    public private(set) var weekCount: Int?
    public private(set) var isLoading = false
    public private(set) var error: ScreenError?
    /// Set when the user's tier does not include progression: present the paywall with it.
    public private(set) var paywall: UpgradePrompt?

    private let plans: any PlanService
    private let catalog: any CatalogService
    private let analytics: any AnalyticsService
    @ObservationIgnored private var generation = LoadGeneration()

    /// A model of plan `planID`'s suggestions over the services of `dependencies`.
    public init(planID: PlanID, dependencies: FitBaseDependencies) {
        self.planID = planID
        plans = dependencies.plans
        catalog = dependencies.catalog
        analytics = dependencies.analytics
    }

    /// The plan week shown.
    public var week: Int? { suggestion?.week }
    /// The feature is not in the user's tier (the server said so).
    public var isLocked: Bool { error?.upgrade != nil }
    /// An earlier week of the plan can be shown.
    public var hasPreviousWeek: Bool { (week ?? 1) > 1 }
    /// A later week of the plan can be shown.
    public var hasNextWeek: Bool { week.map { week in weekCount.map { week < $0 } ?? false } ?? false }
    /// How many sessions get each action, for the summary's chips.
    public var actionCounts: [PlanProgression.Action: Int] { Dictionary(grouping: rows, by: \.action).mapValues(\.count) }

    /// Loads the suggestion for `week` (by default the week after the one holding today).
    public func load(week: Int? = nil) async {
        let ticket = generation.next()
        isLoading = true
        defer { if generation.isCurrent(ticket) { isLoading = false } }
        do throws(KitError) {
            let plan = try await plans.plan(id: planID)
            let suggestion = try await plans.progression(of: planID, week: week)
            let ids = suggestion.sessions.flatMap { [$0.plannedWorkout, $0.workout] }
            let found = try await catalog.workouts(ids: ids, policy: .cacheFirst)
            guard generation.isCurrent(ticket) else { return }
            weekCount = plan?.weeklyWorkouts.count
            self.suggestion = suggestion
            rows = suggestion.sessions.enumerated().map { index, session in
                Row(
                    id: index, session: session, planned: found[session.plannedWorkout]?.workout,
                    suggested: session.workout == session.plannedWorkout ? nil : found[session.workout]?.workout
                )
            }
            error = nil
        } catch {
            guard generation.isCurrent(ticket), !error.isCancellation else { return }
            self.error = ScreenError(error, feature: .advancedProgression)
            if let upgrade = self.error?.upgrade { paywall = upgrade }
            analytics.track(.operationFailed(feature: .plans, reason: error.kind))
        }
    }

    /// Shows the week before the one shown.
    public func showPreviousWeek() async {
        guard let week, hasPreviousWeek else { return }
        await load(week: week - 1)
    }

    /// Shows the week after the one shown.
    public func showNextWeek() async {
        guard let week, hasNextWeek else { return }
        await load(week: week + 1)
    }

    /// The paywall was dismissed (or the purchase unlocked progression: load again).
    public func dismissPaywall() {
        paywall = nil
    }
}

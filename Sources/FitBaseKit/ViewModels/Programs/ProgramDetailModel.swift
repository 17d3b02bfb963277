import FitBaseCore
import Foundation
import Observation

/// A program's screen (seed 001): its weeks resolved to the catalog's workouts, and the premium lock — a premium
/// program the user's tier does not include, or a premium workout of a free one, leads to the paywall when started.
@MainActor @Observable
public final class ProgramDetailModel {
    /// One week of the program as the screen lists it.
    public struct Week: Sendable, Equatable, Identifiable {
        /// 1-based.
        public var number: Int
        /// The week's workouts in the order they are done (a workout gone from the catalog is left out).
        public var workouts: [WorkoutDetail]

        public var id: Int { number }
        /// The week's minutes of training.
        public var totalMinutes: Int { workouts.reduce(0) { $0 + $1.workout.durationMinutes } }
    }

    /// The program's id.
    public let programID: ProgramID
    /// The program (`nil` until loaded).
    public private(set) var program: CatalogProgram?
    /// Its weeks, in order.
    public private(set) var weeks: [Week] = []
    /// The tier that unlocks the program, when it is premium and the user's tier does not include it.
    public private(set) var lockedBy: SubscriptionTier?
    /// How many of the program's workouts are no longer in the catalog.
    public private(set) var missingWorkouts = 0
    public private(set) var isLoading = false
    public private(set) var error: ScreenError?
    /// Set when the user started something their tier does not include: present the paywall with it.
    public private(set) var paywall: UpgradePrompt?

    private let catalog: any CatalogService
    private let billing: any BillingService
    private let analytics: any AnalyticsService
    /// The tier that unlocks premium content, when the user's does not (the entitlement's answer at the last load).
    @ObservationIgnored private var premiumContentTier: SubscriptionTier?

    /// A model of the program `programID` over the services of `dependencies`.
    public init(programID: ProgramID, dependencies: FitBaseDependencies) {
        self.programID = programID
        catalog = dependencies.catalog
        billing = dependencies.billing
        analytics = dependencies.analytics
    }

    /// The lock shows: starting the program leads to the paywall.
    public var isLocked: Bool { lockedBy != nil }
    /// The program's minutes of training in all.
    public var totalMinutes: Int { weeks.reduce(0) { $0 + $1.totalMinutes } }

    /// Loads the program and its workouts (cache-first by default; `.revalidate` for pull to refresh).
    public func load(policy: CachePolicy = .cacheFirst) async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            let program = try await catalog.program(id: programID, policy: policy).value
            let found = try await catalog.workouts(ids: program.weeks.flatMap { $0 }, policy: policy)
            let tier = await billing.requiresUpgrade(for: .premiumContent)
            self.program = program
            weeks = program.weeks.enumerated().map { index, ids in Week(number: index + 1, workouts: ids.compactMap { found[$0] }) }
            missingWorkouts = program.weeks.joined().filter { found[$0] == nil }.count
            premiumContentTier = tier
            lockedBy = program.isPremium ? tier : nil
            error = nil
        } catch {
            guard !error.isCancellation else { return }
            self.error = ScreenError(error, feature: .premiumContent)
            analytics.track(.operationFailed(feature: .catalog, reason: error.kind))
        }
    }

    /// Whether `workout` of the program may start now; when the program or the workout's video is locked, asks for
    /// the paywall instead and answers `false`.
    public func start(_ workout: WorkoutDetail) -> Bool {
        if let lockedBy {
            paywall = UpgradePrompt(requiredTier: lockedBy, feature: .premiumContent)
            return false
        }
        if workout.isVideoLocked, let tier = premiumContentTier ?? workout.requiredTier {
            paywall = UpgradePrompt(requiredTier: tier, feature: .premiumContent)
            return false
        }
        return true
    }

    /// The paywall was dismissed (or the purchase unlocked the program: reload first).
    public func dismissPaywall() {
        paywall = nil
    }
}

import FitBaseClient
import FitBaseCore
import Foundation

/// How the user signed in or up.
public enum SignInMethod: String, Sendable, Equatable, CaseIterable {
    case email, apple, google
}

/// How the user reached a group they joined.
public enum JoinSource: String, Sendable, Equatable, CaseIterable {
    /// Opened an invite link.
    case link
    /// Typed or pasted an invite code.
    case code
}

/// A product event the app records.
///
/// Events carry identifiers and categories only, never a measurement: no health sample value, no cycle date, no
/// notes, no e-mail address. That is enforced by construction — no case has a numeric or free-text associated value
/// that could hold one (ids are catalog, product or group ids; failures carry the ``KitError/Kind``, not a message).
public enum AnalyticsEvent: Sendable, Equatable, Hashable {
    case signedUp(SignInMethod)
    case signedIn(SignInMethod)
    case signedOut
    case accountDeleted
    case onboardingCompleted
    /// A screen appeared (the app's screen name, e.g. `library`).
    case screenViewed(AnalyticsScreen)
    case workoutStarted(workoutID: WorkoutID)
    case workoutCompleted(workoutID: WorkoutID)
    case workoutFailed(workoutID: WorkoutID, reason: KitError.Kind)
    /// A completed workout reached (or failed to reach) the server.
    case workoutSynced(succeeded: Bool)
    /// A period was logged (no date: cycle data stays on the device and the server).
    case periodLogged
    case planSaved
    case recommendationOpened(workoutID: WorkoutID)
    case groupCreated
    case groupJoined(JoinSource)
    case groupLeft
    case inviteShared
    case paywallShown(feature: Feature?, requiredTier: SubscriptionTier)
    case purchaseStarted(productID: String)
    case purchaseCompleted(productID: String, tier: SubscriptionTier)
    case purchaseCancelled(productID: String)
    case purchaseFailed(productID: String, reason: KitError.Kind)
    case purchasesRestored(tier: SubscriptionTier)
    /// A health chart was opened (which metric, never its values).
    case healthChartViewed(HealthSampleType)
    case deepLinkOpened(DeepLink.Kind)
    case deepLinkRejected
    case notificationOpened(NotificationKind)
    /// An operation failed; `feature` names the service (`catalog`, `groups` …).
    case operationFailed(feature: AnalyticsFeature, reason: KitError.Kind)

    /// The event's name, snake_case as analytics back ends expect (`group_joined`).
    public var name: String {
        switch self {
        case .signedUp: "sign_up"
        case .signedIn: "sign_in"
        case .signedOut: "sign_out"
        case .accountDeleted: "account_deleted"
        case .onboardingCompleted: "onboarding_completed"
        case .screenViewed: "screen_view"
        case .workoutStarted: "workout_started"
        case .workoutCompleted: "workout_completed"
        case .workoutFailed: "workout_failed"
        case .workoutSynced: "workout_synced"
        case .periodLogged: "period_logged"
        case .planSaved: "plan_saved"
        case .recommendationOpened: "recommendation_opened"
        case .groupCreated: "group_created"
        case .groupJoined: "group_joined"
        case .groupLeft: "group_left"
        case .inviteShared: "invite_shared"
        case .paywallShown: "paywall_shown"
        case .purchaseStarted: "purchase_started"
        case .purchaseCompleted: "paywall_purchased"
        case .purchaseCancelled: "purchase_cancelled"
        case .purchaseFailed: "purchase_failed"
        case .purchasesRestored: "purchases_restored"
        case .healthChartViewed: "health_chart_viewed"
        case .deepLinkOpened: "deep_link_opened"
        case .deepLinkRejected: "deep_link_rejected"
        case .notificationOpened: "notification_opened"
        case .operationFailed: "operation_failed"
        }
    }

    /// The event's parameters: identifiers and category names only.
    public var parameters: [String: String] {
        switch self {
        case .signedUp(let method), .signedIn(let method): ["method": method.rawValue]
        case .signedOut, .accountDeleted, .onboardingCompleted, .periodLogged, .planSaved, .groupCreated, .groupLeft, .inviteShared, .deepLinkRejected: [:]
        case .screenViewed(let screen): ["screen": screen.rawValue]
        case .workoutStarted(let id), .workoutCompleted(let id), .recommendationOpened(let id): ["workout_id": id.description]
        case .workoutFailed(let id, let reason): ["workout_id": id.description, "reason": reason.rawValue]
        case .workoutSynced(let succeeded): ["succeeded": succeeded ? "true" : "false"]
        case .groupJoined(let source): ["source": source.rawValue]
        case .paywallShown(let feature, let tier): ["feature": feature?.rawValue ?? "none", "required_tier": tier.rawValue]
        case .purchaseStarted(let product), .purchaseCancelled(let product): ["product_id": product]
        case .purchaseCompleted(let product, let tier): ["product_id": product, "tier": tier.rawValue]
        case .purchaseFailed(let product, let reason): ["product_id": product, "reason": reason.rawValue]
        case .purchasesRestored(let tier): ["tier": tier.rawValue]
        case .healthChartViewed(let metric): ["metric": metric.rawValue]
        case .deepLinkOpened(let kind): ["kind": kind.rawValue]
        case .notificationOpened(let kind): ["kind": kind.rawValue]
        case .operationFailed(let feature, let reason): ["feature": feature.rawValue, "reason": reason.rawValue]
        }
    }
}

/// The screens analytics names.
public enum AnalyticsScreen: String, Sendable, Equatable, CaseIterable {
    case onboarding, signIn, home, library, workoutDetail, workoutPlayer, history, stats, cycle, plans, planEditor, paywall, groups, leaderboard,
        notifications, health, profile, privacy, settings
}

/// The features analytics names for failures.
public enum AnalyticsFeature: String, Sendable, Equatable, CaseIterable {
    case auth, profile, cycle, catalog, recommendations, history, plans, billing, groups, notifications, health, sync
}

/// Where analytics events go (seed 002's `AnalyticsService`). `track` never blocks and never fails: sinks queue.
public protocol AnalyticsService: Sendable {
    /// Records `event`.
    func track(_ event: AnalyticsEvent)
    /// Sends what is queued now (before the app goes to the background).
    func flush() async
}

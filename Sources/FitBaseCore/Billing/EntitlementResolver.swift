#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where an entitlement comes from.
public enum EntitlementSource: String, Sendable, Codable, CaseIterable {
    case appStore, stripe, promotional

    /// Rank when two sources would otherwise tie: appStore, then stripe, then promotional.
    fileprivate var precedence: Int {
        switch self {
        case .appStore: 0
        case .stripe: 1
        case .promotional: 2
        }
    }
}

/// The state of a subscription as the user experiences it.
public enum EntitlementStatus: String, Sendable, Codable, CaseIterable {
    case none, trial, active, gracePeriod, billingRetry, cancelled, expired, revoked

    /// Whether the tier's features are available in this status (trial, active, gracePeriod, cancelled).
    public var grantsAccess: Bool {
        switch self {
        case .trial, .active, .gracePeriod, .cancelled: true
        case .none, .billingRetry, .expired, .revoked: false
        }
    }

    /// Rank when two states would otherwise tie; with access, a paid period (renewing or not) over a grace period over
    /// a trial; without, revoked over billingRetry over expired. Higher is preferred.
    fileprivate var preference: Int {
        switch self {
        case .active: 3
        case .cancelled: 2
        case .gracePeriod: 1
        case .trial: 0
        case .revoked: 2
        case .billingRetry: 1
        case .expired: 0
        case .none: -1
        }
    }
}

/// One purchase from one source, as last reported by that source (the server stores these; the SDK may cache them).
public struct SubscriptionState: Sendable, Equatable, Codable {
    /// The store or system that reported the purchase.
    public var source: EntitlementSource
    /// The source's product identifier.
    public var productID: String
    /// The tier the product unlocks.
    public var tier: SubscriptionTier
    /// End of the paid (or trial) period; nil = does not expire (e.g. a lifetime promotional grant).
    public var expiresAt: Date?
    /// The current period is a free trial / introductory free offer.
    public var isTrial: Bool
    /// The subscription will renew at `expiresAt` (false once the user turned auto-renew off / cancel_at_period_end).
    public var willRenew: Bool
    /// Billing failed and the store keeps access open until this instant (App Store grace period).
    public var gracePeriodExpiresAt: Date?
    /// Billing failed and the store is retrying (no access unless still in the grace period).
    public var isInBillingRetry: Bool
    /// Refunded or revoked at this instant: access ends at once, whatever expiresAt says.
    public var revokedAt: Date?

    /// Makes a state; by default a renewing, paid period with no billing trouble.
    public init(
        source: EntitlementSource, productID: String, tier: SubscriptionTier, expiresAt: Date?, isTrial: Bool = false,
        willRenew: Bool = true, gracePeriodExpiresAt: Date? = nil, isInBillingRetry: Bool = false, revokedAt: Date? = nil
    ) {
        self.source = source
        self.productID = productID
        self.tier = tier
        self.expiresAt = expiresAt
        self.isTrial = isTrial
        self.willRenew = willRenew
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.isInBillingRetry = isInBillingRetry
        self.revokedAt = revokedAt
    }
}

/// The one answer every source resolves to.
public struct Entitlement: Sendable, Equatable, Codable {
    /// The tier whose features the user has: free unless `status` grants access.
    public var tier: SubscriptionTier
    /// The state of the subscription behind the answer.
    public var status: EntitlementStatus
    /// When that subscription's period ends (or ended); nil when it does not expire or there is none.
    public var expiresAt: Date?
    /// Whether that subscription renews at `expiresAt`.
    public var willRenew: Bool
    /// Where that subscription comes from; nil when there is none.
    public var source: EntitlementSource?

    /// Makes an entitlement, e.g. from the server's answer.
    public init(tier: SubscriptionTier, status: EntitlementStatus, expiresAt: Date?, willRenew: Bool, source: EntitlementSource?) {
        self.tier = tier
        self.status = status
        self.expiresAt = expiresAt
        self.willRenew = willRenew
        self.source = source
    }

    /// No purchase at all: free, status none.
    public static let free = Entitlement(tier: .free, status: .none, expiresAt: nil, willRenew: false, source: nil)
}

/// Resolves every source's subscription states into one entitlement (RevenueCat-style).
///
/// The status of one state at `now`, in this order:
/// 1. `revokedAt <= now` → `revoked`: a refund or revocation ends access at once, whatever `expiresAt` says.
/// 2. `expiresAt` nil or after `now` (the period is paid): `isTrial` → `trial`; else `!willRenew` → `cancelled`
///    (keeps access until it expires), but a `promotional` grant, which never renews and was not cancelled, is
///    `active`; else `active`. Billing-retry flags do not matter while the period is paid.
/// 3. `expiresAt <= now`: `gracePeriodExpiresAt` after `now` → `gracePeriod`; else `isInBillingRetry` →
///    `billingRetry`; else `expired`.
///
/// `trial`, `active`, `gracePeriod` and `cancelled` grant access. Among the states that do, the highest tier wins;
/// ties go to the later `expiresAt` (nil counts as latest), then to the source appStore, stripe, promotional, and the
/// entitlement carries that state's tier, status, expiry, renewal and source. When none grants access the tier is
/// free, and the rest comes from the most telling lapsed state: revoked over billingRetry over expired, the latest
/// `revokedAt` (for revoked) then the latest `expiresAt` within a kind. No states at all resolve to `Entitlement.free`.
/// The answer never depends on the order of the states.
public struct EntitlementResolver: Sendable {
    /// Makes a resolver.
    public init() {}

    /// The status of one state at `now`.
    public func status(of state: SubscriptionState, at now: Date) -> EntitlementStatus {
        if let revokedAt = state.revokedAt, revokedAt <= now { return .revoked }
        if state.expiresAt.map({ $0 > now }) ?? true {
            if state.isTrial { return .trial }
            // A promotional grant never renews, and nobody cancelled it: it is active until it ends.
            return state.willRenew || state.source == .promotional ? .active : .cancelled
        }
        if let graceEnds = state.gracePeriodExpiresAt, graceEnds > now { return .gracePeriod }
        return state.isInBillingRetry ? .billingRetry : .expired
    }

    /// All states → one entitlement at `now`.
    public func resolve(_ states: [SubscriptionState], at now: Date) -> Entitlement {
        let rated = states.map { Rated(state: $0, status: status(of: $0, at: now)) }
        if let best = rated.filter(\.status.grantsAccess).max(by: { $1.outranksWithAccess($0) }) {
            return best.entitlement(tier: best.state.tier)
        }
        if let lapsed = rated.max(by: { $1.outranksLapsed($0) }) {
            return lapsed.entitlement(tier: .free)
        }
        return .free
    }
}

/// A state with its status at the moment being resolved.
private struct Rated {
    let state: SubscriptionState
    let status: EntitlementStatus

    /// The entitlement this state decides. A revoked one ended at its revocation and, like an expired one, will not
    /// renew (a refunded subscription must not read "renews on …"); billing retry keeps the store's renewal intent.
    func entitlement(tier: SubscriptionTier) -> Entitlement {
        switch status {
        case .revoked: Entitlement(tier: tier, status: status, expiresAt: state.revokedAt, willRenew: false, source: state.source)
        case .expired: Entitlement(tier: tier, status: status, expiresAt: state.expiresAt, willRenew: false, source: state.source)
        default: Entitlement(tier: tier, status: status, expiresAt: state.expiresAt, willRenew: state.willRenew, source: state.source)
        }
    }

    /// Whether `self` should decide the entitlement over `other`, both granting access.
    func outranksWithAccess(_ other: Rated) -> Bool {
        if state.tier != other.state.tier { return state.tier > other.state.tier }
        return outranksOnRemainingFields(other)
    }

    /// Whether `self` tells more about the lapse than `other`, neither granting access.
    func outranksLapsed(_ other: Rated) -> Bool {
        if status != other.status { return status.preference > other.status.preference }
        if state.revokedAt != other.state.revokedAt { return Self.isLater(state.revokedAt, than: other.state.revokedAt) }
        return outranksOnRemainingFields(other)
    }

    /// Later expiry, then source precedence, then the field the entitlement still carries (renewal, status), so
    /// that two states which tie here would produce the same entitlement and input order cannot matter.
    private func outranksOnRemainingFields(_ other: Rated) -> Bool {
        if state.expiresAt != other.state.expiresAt { return Self.isLater(state.expiresAt, than: other.state.expiresAt) }
        if state.source != other.state.source { return state.source.precedence < other.state.source.precedence }
        if state.willRenew != other.state.willRenew { return state.willRenew }
        return status.preference > other.status.preference
    }

    /// Compares two instants where nil means never (latest of all).
    private static func isLater(_ date: Date?, than other: Date?) -> Bool {
        switch (date, other) {
        case (nil, nil): false
        case (nil, _?): true
        case (_?, nil): false
        case (let date?, let other?): date > other
        }
    }
}

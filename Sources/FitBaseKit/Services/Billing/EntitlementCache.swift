import FitBaseCore
import Foundation

/// The rules of an entitlement read from the device's cache.
enum EntitlementCache {
    /// The longest billing grace period a store grants (the App Store's is at most 16 days).
    static let longestGracePeriod: TimeInterval = 16 * 86_400

    /// `entitlement` as it stands at `now`: a paid period that has ended (past `expiresAt`) grants nothing, whatever
    /// the cached status says — the device cannot know of a renewal until the server tells it. A subscription the
    /// server said was in its billing grace period keeps access for the longest grace period past `expiresAt`.
    static func effective(_ entitlement: Entitlement, now: Date) -> Entitlement {
        guard entitlement.tier != .free, let expiresAt = entitlement.expiresAt else { return entitlement }
        let end = entitlement.status == .gracePeriod ? expiresAt.addingTimeInterval(longestGracePeriod) : expiresAt
        guard end <= now else { return entitlement }
        return Entitlement(tier: .free, status: .expired, expiresAt: expiresAt, willRenew: entitlement.willRenew, source: entitlement.source)
    }
}

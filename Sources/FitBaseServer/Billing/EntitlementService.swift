import FitBaseCore
import Foundation
import HTTPTypes

/// A user's entitlement, resolved from every subscription they own, and the gate features are enforced with.
struct EntitlementService: PremiumContentAccess {
    let store: SubscriptionStore
    let catalog: ProductCatalog
    /// When the gates ask: a subscription counts until the application's clock passes its end.
    let clock: ServerClock
    private let resolver = EntitlementResolver()

    init(store: SubscriptionStore, catalog: ProductCatalog, clock: ServerClock) {
        self.store = store
        self.catalog = catalog
        self.clock = clock
    }

    /// The entitlement of `user` at `now`.
    func entitlement(of user: UserID, at now: Date) async throws -> Entitlement {
        resolver.resolve(try await store.states(of: user), at: now)
    }

    /// Whether the caller may use `feature`. Administrators may use everything (they curate premium content).
    func allows(_ feature: Feature, caller: Caller) async throws -> Bool {
        if caller.role == .admin { return true }
        return catalog.tierFeatures.allows(feature, for: try await entitlement(of: caller.user, at: clock.now).tier)
    }

    /// Throws 402 `upgrade_required` naming the lowest tier with `feature` unless the caller may use it.
    func require(_ feature: Feature, caller: Caller, doing action: String) async throws {
        guard try await !allows(feature, caller: caller) else { return }
        throw Self.upgradeRequired(feature, tier: catalog.tierFeatures.requiredTier(for: feature), doing: action)
    }

    static func upgradeRequired(_ feature: Feature, tier: SubscriptionTier?, doing action: String) -> Problem {
        Problem(
            .init(code: 402, reasonPhrase: "Payment Required"), code: .upgradeRequired, title: "Upgrade required",
            detail: "\(action) needs the \(feature.rawValue) feature" + (tier.map { ", which the \($0.rawValue) tier includes." } ?? "."),
            requiredTier: tier?.rawValue
        )
    }

    func isEntitled(_ caller: Caller?) async throws -> Bool {
        guard let caller else { return false }
        return try await allows(.premiumContent, caller: caller)
    }
}

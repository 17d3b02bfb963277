import FitBaseCore
import Foundation
import Testing

@Suite struct EntitlementResolverTests {
    private let resolver = EntitlementResolver()
    private let now = Date(timeIntervalSince1970: 1_790_000_000)

    private func at(days: Double) -> Date { now.addingTimeInterval(days * 86_400) }

    private func state(
        _ source: EntitlementSource = .appStore, _ tier: SubscriptionTier = .pro, expires: Date?, trial: Bool = false,
        renews: Bool = true, grace: Date? = nil, retrying: Bool = false, revoked: Date? = nil
    ) -> SubscriptionState {
        SubscriptionState(
            source: source, productID: "\(source.rawValue).\(tier.rawValue)", tier: tier, expiresAt: expires, isTrial: trial,
            willRenew: renews, gracePeriodExpiresAt: grace, isInBillingRetry: retrying, revokedAt: revoked
        )
    }

    // MARK: Status of one state

    @Test func aPaidPeriodIsActiveTrialOrCancelledUntilItsLastInstant() {
        #expect(resolver.status(of: state(expires: at(days: 30)), at: now) == .active)
        #expect(resolver.status(of: state(expires: at(days: 7), trial: true), at: now) == .trial)
        #expect(resolver.status(of: state(expires: at(days: 7), trial: true, renews: false), at: now) == .trial)
        #expect(resolver.status(of: state(expires: at(days: 30), renews: false), at: now) == .cancelled)
        #expect(resolver.status(of: state(expires: now.addingTimeInterval(1)), at: now) == .active)
        #expect(resolver.status(of: state(expires: nil), at: now) == .active)
        // Billing-retry flags do not matter while the period is paid.
        #expect(resolver.status(of: state(expires: at(days: 2), grace: at(days: 5), retrying: true), at: now) == .active)
    }

    @Test func aPeriodEndingExactlyNowHasExpired() {
        #expect(resolver.status(of: state(expires: now), at: now) == .expired)
        #expect(resolver.status(of: state(expires: now, trial: true), at: now) == .expired)
        #expect(resolver.status(of: state(expires: now, renews: false), at: now) == .expired)
    }

    @Test func revocationEndsAccessFromItsInstantWhateverTheExpiry() {
        let refunded = state(expires: at(days: 300), revoked: now)
        #expect(resolver.status(of: refunded, at: now.addingTimeInterval(-1)) == .active)
        #expect(resolver.status(of: refunded, at: now) == .revoked)
        #expect(resolver.status(of: state(expires: nil, revoked: at(days: -1)), at: now) == .revoked)
        #expect(resolver.status(of: state(expires: at(days: -1), grace: at(days: 5), revoked: at(days: -2)), at: now) == .revoked)
        let entitlement = resolver.resolve([state(.appStore, .premium, expires: at(days: 300), revoked: at(days: -1))], at: now)
        #expect(entitlement.tier == .free)
        #expect(entitlement.status == .revoked)
    }

    @Test func afterExpiryTheGracePeriodKeepsAccessUntilItsEndThenBillingRetryOrExpired() {
        let failing = state(expires: at(days: -1), grace: at(days: 2), retrying: true)
        #expect(resolver.status(of: failing, at: now) == .gracePeriod)
        #expect(resolver.status(of: failing, at: at(days: 2).addingTimeInterval(-1)) == .gracePeriod)
        #expect(resolver.status(of: failing, at: at(days: 2)) == .billingRetry)
        #expect(resolver.status(of: state(expires: at(days: -1), retrying: true), at: now) == .billingRetry)
        #expect(resolver.status(of: state(expires: at(days: -1), grace: at(days: -0.5)), at: now) == .expired)
        #expect(resolver.status(of: state(expires: at(days: -1)), at: now) == .expired)
    }

    @Test func onlyTrialActiveGracePeriodAndCancelledGrantAccess() {
        let granting = EntitlementStatus.allCases.filter(\.grantsAccess)
        #expect(Set(granting) == [.trial, .active, .gracePeriod, .cancelled])
    }

    // MARK: Resolving

    @Test func cancelledButPaidKeepsItsTierUntilExpiryThenFallsToFree() {
        let cancelled = [state(.stripe, .premium, expires: at(days: 10), renews: false)]
        #expect(resolver.resolve(cancelled, at: now) == Entitlement(
            tier: .premium, status: .cancelled, expiresAt: at(days: 10), willRenew: false, source: .stripe
        ))
        #expect(resolver.resolve(cancelled, at: at(days: 10)) == Entitlement(
            tier: .free, status: .expired, expiresAt: at(days: 10), willRenew: false, source: .stripe
        ))
    }

    @Test func aLapsedHigherTierGivesWayToALiveLowerOne() {
        let states = [state(.appStore, .premium, expires: at(days: -3)), state(.stripe, .pro, expires: at(days: 20))]
        #expect(resolver.resolve(states, at: now) == Entitlement(
            tier: .pro, status: .active, expiresAt: at(days: 20), willRenew: true, source: .stripe
        ))
    }

    @Test func theHighestTierWinsOverALaterExpiry() {
        let states = [state(.appStore, .pro, expires: nil), state(.stripe, .premium, expires: at(days: 1), trial: true)]
        let entitlement = resolver.resolve(states, at: now)
        #expect(entitlement.tier == .premium)
        #expect(entitlement.status == .trial)
        #expect(entitlement.source == .stripe)
    }

    @Test func betweenEqualTiersTheLaterExpiryWinsThenTheSourceOrder() {
        let appStore = state(.appStore, .premium, expires: at(days: 5))
        let stripe = state(.stripe, .premium, expires: at(days: 25), renews: false)
        #expect(resolver.resolve([appStore, stripe], at: now) == Entitlement(
            tier: .premium, status: .cancelled, expiresAt: at(days: 25), willRenew: false, source: .stripe
        ))
        let sameEnd = [state(.promotional, .premium, expires: at(days: 5)), state(.stripe, .premium, expires: at(days: 5)), appStore]
        #expect(resolver.resolve(sameEnd, at: now).source == .appStore)
        #expect(resolver.resolve(Array(sameEnd.prefix(2)), at: now).source == .stripe)
    }

    @Test func aPromotionalGrantWithoutExpiryCountsAsLatest() {
        let states = [state(.appStore, .premium, expires: at(days: 365)), state(.promotional, .premium, expires: nil, renews: false)]
        #expect(resolver.resolve(states, at: now) == Entitlement(
            tier: .premium, status: .active, expiresAt: nil, willRenew: false, source: .promotional
        ))
        // Only a promotional grant is active without renewing; a store subscription that will not renew was cancelled.
        #expect(resolver.status(of: state(.appStore, .premium, expires: at(days: 30), renews: false), at: now) == .cancelled)
        #expect(resolver.status(of: state(.promotional, .premium, expires: at(days: 30), renews: false), at: now) == .active)
        let lifetime = state(.promotional, .pro, expires: nil)
        #expect(resolver.resolve([lifetime], at: at(days: 10_000)) == Entitlement(
            tier: .pro, status: .active, expiresAt: nil, willRenew: true, source: .promotional
        ))
    }

    @Test func lapsedStatesPreferRevokedThenBillingRetryThenExpiredThenTheLatest() {
        let expired = state(.appStore, .premium, expires: at(days: -1))
        let olderExpired = state(.stripe, .pro, expires: at(days: -40))
        let retrying = state(.stripe, .pro, expires: at(days: -10), retrying: true)
        let revoked = state(.promotional, .pro, expires: at(days: 300), revoked: at(days: -31))
        let laterRevoked = state(.stripe, .premium, expires: at(days: 200), revoked: at(days: -2))

        #expect(resolver.resolve([expired, olderExpired], at: now) == Entitlement(
            tier: .free, status: .expired, expiresAt: at(days: -1), willRenew: false, source: .appStore
        ))
        #expect(resolver.resolve([expired, retrying], at: now) == Entitlement(
            tier: .free, status: .billingRetry, expiresAt: at(days: -10), willRenew: true, source: .stripe
        ))
        #expect(resolver.resolve([expired, retrying, revoked], at: now).source == .promotional)
        #expect(resolver.resolve([expired, retrying, revoked, laterRevoked], at: now) == Entitlement(
            tier: .free, status: .revoked, expiresAt: at(days: -2), willRenew: false, source: .stripe
        ))
    }

    @Test func noStatesAtAllIsFree() {
        #expect(resolver.resolve([], at: now) == .free)
        #expect(Entitlement.free == Entitlement(tier: .free, status: .none, expiresAt: nil, willRenew: false, source: nil))
    }

    @Test func inputOrderNeverChangesTheAnswer() {
        let live = [
            state(.appStore, .premium, expires: at(days: 9)),
            state(.stripe, .premium, expires: at(days: 9), renews: false),
            state(.promotional, .premium, expires: at(days: 9)),
            state(.stripe, .premium, expires: at(days: 9), trial: true),
            state(.appStore, .pro, expires: nil),
        ]
        let lapsed = [
            state(.appStore, .premium, expires: at(days: -1)),
            state(.stripe, .premium, expires: at(days: -1), renews: false),
            state(.appStore, .pro, expires: at(days: -1), renews: false),
            state(.stripe, .pro, expires: at(days: -5), revoked: at(days: -2)),
            state(.promotional, .pro, expires: at(days: 5), revoked: at(days: -2)),
        ]
        // Equal on tier, expiry and source: only renewal and status can tell them apart.
        let tied = [
            state(.stripe, .premium, expires: at(days: 9), renews: false),
            state(.stripe, .premium, expires: at(days: 9), trial: true),
            state(.stripe, .premium, expires: at(days: 9)),
            state(.stripe, .premium, expires: at(days: 9), trial: true, renews: false),
            state(.stripe, .premium, expires: at(days: -1), renews: false),
        ]
        let renewalOnly = [tied[1], tied[3]]
        let lapsedRenewalOnly = [tied[4], state(.stripe, .premium, expires: at(days: -1))]
        for states in [live, lapsed, tied, renewalOnly, lapsedRenewalOnly, live + lapsed] {
            let expected = resolver.resolve(states, at: now)
            let orders = permutations(of: Array(states.prefix(5))).map { $0 + states.dropFirst(5) }
            for order in orders + (0..<50).map({ _ in states.shuffled() }) {
                #expect(resolver.resolve(order, at: now) == expected)
            }
        }
        #expect(resolver.resolve(live, at: now) == Entitlement(
            tier: .premium, status: .active, expiresAt: at(days: 9), willRenew: true, source: .appStore
        ))
        #expect(resolver.resolve(tied, at: now) == Entitlement(
            tier: .premium, status: .active, expiresAt: at(days: 9), willRenew: true, source: .stripe
        ))
        #expect(resolver.resolve(renewalOnly, at: now) == Entitlement(
            tier: .premium, status: .trial, expiresAt: at(days: 9), willRenew: true, source: .stripe
        ))
        #expect(resolver.resolve(lapsedRenewalOnly, at: now) == Entitlement(
            tier: .free, status: .expired, expiresAt: at(days: -1), willRenew: false, source: .stripe
        ))
        #expect(resolver.resolve(lapsed, at: now) == Entitlement(
            tier: .free, status: .revoked, expiresAt: at(days: -2), willRenew: false, source: .promotional
        ))
    }

    private func permutations<Element>(of elements: [Element]) -> [[Element]] {
        guard let first = elements.first else { return [[]] }
        return permutations(of: Array(elements.dropFirst())).flatMap { rest in
            (0...rest.count).map { index in
                var order = rest
                order.insert(first, at: index)
                return order
            }
        }
    }

    // MARK: Tier features

    @Test func tiersAreOrderedFreeProPremium() {
        #expect(SubscriptionTier.allCases.sorted() == [.free, .pro, .premium])
        #expect(SubscriptionTier.free < .pro && SubscriptionTier.pro < .premium)
        #expect(!(SubscriptionTier.premium < .pro))
    }

    @Test func standardFeaturesFollowTheSeeds() throws {
        let standard = TierFeatures.standard
        let required: [Feature: SubscriptionTier] = [
            .basicPlans: .free, .workoutTracking: .free, .customPlans: .pro, .analytics: .pro,
            .advancedProgression: .premium, .premiumContent: .premium,
        ]
        #expect(Set(required.keys) == Set(Feature.allCases))
        for feature in Feature.allCases {
            #expect(standard.requiredTier(for: feature) == required[feature], "\(feature)")
            for tier in SubscriptionTier.allCases {
                #expect(standard.allows(feature, for: tier) == (tier >= required[feature]!), "\(feature) for \(tier)")
            }
        }
        #expect(try TierFeatures(standard.features) == standard)
    }

    @Test func aFeatureNoTierUnlocksHasNoRequiredTier() throws {
        let features = try TierFeatures([.free: [], .pro: [.analytics], .premium: [.analytics]])
        #expect(features.requiredTier(for: .premiumContent) == nil)
        #expect(features.requiredTier(for: .analytics) == .pro)
        #expect(!features.allows(.premiumContent, for: .premium))
    }

    @Test func aHigherTierMissingALowerTiersFeatureIsRefused() {
        var features = TierFeatures.standard.features
        features[.premium]?.remove(.analytics)
        #expect(throws: TierFeaturesError(tier: .premium, reason: .featureMissing(.analytics, unlockedBy: .pro))) {
            try TierFeatures(features)
        }
        do {
            _ = try TierFeatures(features)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "tier premium lacks analytics, which the lower tier pro unlocks")
        }
    }

    @Test func aMissingTierIsRefused() {
        var features = TierFeatures.standard.features
        features[.pro] = nil
        #expect(throws: TierFeaturesError(tier: .pro, reason: .tierMissing)) { try TierFeatures(features) }
        do {
            _ = try TierFeatures(features)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "tier pro has no features listed")
        }
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// Subscription status and features for the signed-in user, the app's StoreKit transactions, and the stores' webhooks.
protocol BillingOperations: FeatureOperations { var billingFeature: BillingFeature { get } }

extension BillingOperations {
    private var appStore: AppStoreSubscriptions? { billingFeature.appStore }

    func getSubscription(_ input: Operations.GetSubscription.Input) async throws -> Operations.GetSubscription.Output {
        let caller = try RequestScope.requireCaller()
        return .ok(.init(body: .json(try await status(of: caller.user))))
    }

    func getFeatures(_ input: Operations.GetFeatures.Input) async throws -> Operations.GetFeatures.Output {
        let caller = try RequestScope.requireCaller()
        let tier = try await billingFeature.entitlements.entitlement(of: caller.user, at: clock.now).tier
        let tiers = billingFeature.entitlements.catalog.tierFeatures
        let features = Feature.allCases.map { feature in
            Components.Schemas.FeatureAccess(
                feature: feature, allowed: caller.role == .admin || tiers.allows(feature, for: tier),
                requiredTier: tiers.requiredTier(for: feature) ?? .premium
            )
        }
        return .ok(.init(body: .json(.init(tier: tier, features: features))))
    }

    /// The products file's products, to anyone: a paywall may show before sign-in, and the list names no one.
    func listBillingProducts(
        _ input: Operations.ListBillingProducts.Input
    ) async throws -> Operations.ListBillingProducts.Output {
        let items = billingFeature.entitlements.catalog.products.map { product in
            Components.Schemas.BillingProduct(
                store: product.store, productId: product.productID, tier: product.tier, period: product.period)
        }
        return .ok(.init(body: .json(.init(items: items))))
    }

    func submitAppStoreTransaction(_ input: Operations.SubmitAppStoreTransaction.Input) async throws -> Operations.SubmitAppStoreTransaction.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        try await configuredAppStore().claim(body.signedTransaction, by: caller.user, now: clock.now)
        return .ok(.init(body: .json(try await status(of: caller.user))))
    }

    func receiveAppStoreNotification(_ input: Operations.ReceiveAppStoreNotification.Input) async throws -> Operations.ReceiveAppStoreNotification.Output {
        try await metrics.webhook(source: "appstore") {
            guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
            let now = clock.now
            let outcome = try await WebhookFailureLog.recording(.appStore, in: billingFeature.database, now: now) {
                try await configuredAppStore().receive(body.signedPayload, now: now)
            }
            return (.ok(.init(body: .json(.init(result: outcome == .processed ? .processed : .duplicate)))), outcome == .processed ? "processed" : "duplicate")
        }
    }

    func receiveStripeEvent(_ input: Operations.ReceiveStripeEvent.Input) async throws -> Operations.ReceiveStripeEvent.Output {
        try await metrics.webhook(source: "stripe") {
            // StripeWebhookMiddleware verified the signature on these exact bytes; the generated body is not used.
            guard let payload = StripeWebhookScope.verifiedPayload else {
                throw Problem(.badRequest, code: .stripeMissingHeader, detail: "Stripe-Signature was not verified.")
            }
            let now = clock.now
            let outcome = try await WebhookFailureLog.recording(.stripe, in: billingFeature.database, now: now) {
                try await billingFeature.stripe.receive(payload, now: now)
            }
            return (.ok(.init(body: .json(.init(result: outcome == .processed ? .processed : .duplicate)))), outcome == .processed ? "processed" : "duplicate")
        }
    }

    // MARK: Helpers

    private func configuredAppStore() throws -> AppStoreSubscriptions {
        guard let appStore else {
            throw Problem(.serviceUnavailable, code: .appstoreNotConfigured, detail: "Set FITBASE_APPSTORE_BUNDLE_ID to accept App Store purchases.")
        }
        return appStore
    }

    /// The caller's entitlement and every subscription behind it, at one instant.
    private func status(of user: UserID) async throws -> Components.Schemas.SubscriptionStatus {
        let now = clock.now
        let records = try await billingFeature.database.withConnection { db in try await SubscriptionStore.records(of: user, on: db) }
        let resolver = EntitlementResolver()
        let entitlement = resolver.resolve(records.map(\.state), at: now)
        let features = billingFeature.entitlements.catalog.tierFeatures.features[entitlement.tier] ?? []
        return Components.Schemas.SubscriptionStatus(
            tier: entitlement.tier, status: entitlement.status, expiresAt: entitlement.expiresAt,
            willRenew: entitlement.willRenew, source: entitlement.source,
            features: Feature.allCases.filter(features.contains),
            subscriptions: records.map { record in
                .init(
                    source: record.state.source, productId: record.state.productID, tier: record.state.tier,
                    status: resolver.status(of: record.state, at: now), expiresAt: record.state.expiresAt,
                    willRenew: record.state.willRenew
                )
            }
        )
    }

    // The generated enums have the same cases as FitBaseCore's.
}

import Foundation
import Hummingbird

/// Subscriptions and entitlements: App Store and Stripe purchases, the products file, and what a tier unlocks.
struct BillingFeature: ServerFeature {
    /// What the caller's tier unlocks; every premium check of the other features asks it.
    let entitlements: EntitlementService
    /// `nil` when `FITBASE_APPSTORE_BUNDLE_ID` is unset.
    let appStore: AppStoreSubscriptions?
    let stripe: StripeSubscriptions
    let database: Database
    private let stripeVerifier: StripeSignatureVerifier?
    private let maxBodyBytes: Int
    private let clock: ServerClock

    /// Loads the products file and Apple's root certificates (both fail start-up naming their setting).
    init(_ foundation: ServerFoundation) throws {
        let configuration = foundation.configuration
        let products = try ProductCatalog.load(path: configuration.billing.productsFile)
        let database = foundation.database
        entitlements = EntitlementService(store: SubscriptionStore(database: database), catalog: products, clock: foundation.clock)
        appStore = try AppStoreSignedDataVerifier.load(configuration.billing).map {
            AppStoreSubscriptions(verifier: $0, catalog: products, database: database, logger: foundation.logger)
        }
        stripe = StripeSubscriptions(catalog: products, database: database, logger: foundation.logger)
        stripeVerifier = configuration.billing.stripeWebhookSecrets.isEmpty ? nil : StripeSignatureVerifier(secrets: configuration.billing.stripeWebhookSecrets)
        maxBodyBytes = configuration.maxBodyBytes
        self.database = database
        clock = foundation.clock
    }

    var dataOwners: [any AccountDataOwner] { [SubscriptionsOwner()] }

    var middleware: [ScopedMiddleware] {
        [
            ScopedMiddleware(
                applies: StripeWebhookMiddleware.applies,
                middleware: StripeWebhookMiddleware(verifier: stripeVerifier, maxBytes: maxBodyBytes, clock: clock, database: database)
            ),
            // The products list is revalidated like the other cache-first reads: 304 until the products file changes.
            ScopedMiddleware(
                applies: { path, method in method == .get && path == "/v1/billing/products" }, middleware: ConditionalGetMiddleware()
            ),
        ]
    }
}

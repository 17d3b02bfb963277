import Foundation

/// Settings of subscriptions: the products file, App Store verification and Stripe webhooks, all from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_PRODUCTS_FILE` | JSON mapping store products to tiers and tiers to features | the bundled `default-products.json` |
/// | `FITBASE_APPSTORE_BUNDLE_ID` | the app's bundle id; App Store transactions and notifications must carry it | unset: App Store endpoints answer 503 |
/// | `FITBASE_APPSTORE_ENVIRONMENT` | `Production` or `Sandbox` | `Production` |
/// | `FITBASE_APPSTORE_APP_APPLE_ID` | the app's Apple ID (a number); required in Production | unset |
/// | `FITBASE_APPSTORE_ROOT_CERTS` | comma list of DER or PEM files trusted as roots of the `x5c` chain | the bundled Apple Root CA – G3 |
/// | `FITBASE_APPSTORE_ALLOW_XCODE` | accept unsigned Xcode / LocalTesting StoreKit data (development only) | `false` |
/// | `FITBASE_STRIPE_WEBHOOK_SECRETS` | comma list of Stripe endpoint secrets (`whsec_…`); several while rotating | unset: the Stripe webhook answers 503 |
public struct BillingConfiguration: Sendable, Equatable {
    public var productsFile: String?
    public var appStoreBundleID: String?
    /// `Production` or `Sandbox`.
    public var appStoreEnvironment = "Production"
    public var appStoreAppAppleID: Int64?
    /// Empty: the bundled Apple Root CA – G3.
    public var appStoreRootCertificateFiles: [String] = []
    public var appStoreAllowsXcode = false
    public var stripeWebhookSecrets: [String] = []

    public init(
        productsFile: String? = nil, appStoreBundleID: String? = nil, appStoreEnvironment: String = "Production",
        appStoreAppAppleID: Int64? = nil, appStoreRootCertificateFiles: [String] = [], appStoreAllowsXcode: Bool = false,
        stripeWebhookSecrets: [String] = []
    ) {
        self.productsFile = productsFile
        self.appStoreBundleID = appStoreBundleID
        self.appStoreEnvironment = appStoreEnvironment
        self.appStoreAppAppleID = appStoreAppAppleID
        self.appStoreRootCertificateFiles = appStoreRootCertificateFiles
        self.appStoreAllowsXcode = appStoreAllowsXcode
        self.stripeWebhookSecrets = stripeWebhookSecrets
    }

    static func resolve(environment: [String: String]) throws(ConfigurationError) -> BillingConfiguration {
        func text(_ variable: String) -> String? {
            guard let value = environment[variable]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        func list(_ variable: String) -> [String] {
            (environment[variable] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }

        var configuration = BillingConfiguration()
        configuration.productsFile = text("FITBASE_PRODUCTS_FILE")
        configuration.appStoreBundleID = text("FITBASE_APPSTORE_BUNDLE_ID")
        if let value = text("FITBASE_APPSTORE_ENVIRONMENT") {
            guard ["Production", "Sandbox"].contains(value) else {
                throw ConfigurationError(
                    setting: "appstore-environment", source: "FITBASE_APPSTORE_ENVIRONMENT", value: value, expected: "Production or Sandbox"
                )
            }
            configuration.appStoreEnvironment = value
        }
        if let value = text("FITBASE_APPSTORE_APP_APPLE_ID") {
            guard let id = Int64(value), id > 0 else {
                throw ConfigurationError(
                    setting: "appstore-app-apple-id", source: "FITBASE_APPSTORE_APP_APPLE_ID", value: value, expected: "the app's numeric Apple ID"
                )
            }
            configuration.appStoreAppAppleID = id
        }
        if configuration.appStoreBundleID != nil, configuration.appStoreEnvironment == "Production", configuration.appStoreAppAppleID == nil {
            throw ConfigurationError(
                setting: "appstore-app-apple-id", source: "FITBASE_APPSTORE_APP_APPLE_ID", value: "",
                expected: "the app's numeric Apple ID (required when FITBASE_APPSTORE_ENVIRONMENT is Production)"
            )
        }
        configuration.appStoreRootCertificateFiles = list("FITBASE_APPSTORE_ROOT_CERTS")
        if let value = text("FITBASE_APPSTORE_ALLOW_XCODE") {
            guard let allows = Bool(value.lowercased()) else {
                throw ConfigurationError(setting: "appstore-allow-xcode", source: "FITBASE_APPSTORE_ALLOW_XCODE", value: value, expected: "true or false")
            }
            configuration.appStoreAllowsXcode = allows
        }
        if configuration.appStoreAllowsXcode, configuration.appStoreBundleID != nil, configuration.appStoreEnvironment == "Production" {
            throw ConfigurationError(
                setting: "appstore-allow-xcode", source: "FITBASE_APPSTORE_ALLOW_XCODE", value: "true",
                expected: "false in Production (unsigned Xcode data would be accepted as purchases)"
            )
        }
        configuration.stripeWebhookSecrets = list("FITBASE_STRIPE_WEBHOOK_SECRETS")
        if let bad = configuration.stripeWebhookSecrets.first(where: { !$0.hasPrefix("whsec_") }) {
            throw ConfigurationError(
                setting: "stripe-webhook-secrets", source: "FITBASE_STRIPE_WEBHOOK_SECRETS", value: String(bad.prefix(6)) + "…",
                expected: "a comma list of Stripe endpoint secrets starting with whsec_"
            )
        }
        return configuration
    }
}

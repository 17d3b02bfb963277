import FitBaseClient
import FitBaseCore
import FitBaseKit
import Foundation

/// The App Store as StoreKit Testing in Xcode plays it: a purchase succeeds at once, and its transaction is in the
/// `Xcode` environment, which the App Store does not sign. A server started for StoreKit testing
/// (`FITBASE_APPSTORE_BUNDLE_ID`, `FITBASE_APPSTORE_ENVIRONMENT=Sandbox`, `FITBASE_APPSTORE_ALLOW_XCODE=true`; never in
/// production) takes them; any other refuses them. Transactions stay unfinished until the Kit finishes them.
actor StoreKitTestingStore: PurchaseProvider {
    let bundleID: String
    private(set) var unfinished: [StoreTransaction] = []
    private(set) var finished: [String] = []
    private var bought: [StoreTransaction] = []

    init(bundleID: String) {
        self.bundleID = bundleID
    }

    func products(ids: [String]) async throws -> [StoreProduct] {
        ids.map { StoreProduct(id: $0, displayName: "Premium", displayPrice: "$9.99") }
    }

    func purchase(productID: String, appAccountToken: UUID?) async throws -> StorePurchaseOutcome {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let id = String(UInt64.random(in: 1_000_000_000...9_999_999_999))
        var payload: [String: Any] = [
            "transactionId": id, "originalTransactionId": id, "bundleId": bundleID, "productId": productID, "purchaseDate": now,
            "originalPurchaseDate": now, "expiresDate": now + 30 * 86_400_000, "signedDate": now, "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": "PURCHASED", "environment": "Xcode", "quantity": 1,
        ]
        if let appAccountToken { payload["appAccountToken"] = appAccountToken.uuidString.lowercased() }
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": "Apple_Xcode_Key", "typ": "JWT"])
        let body = try JSONSerialization.data(withJSONObject: payload)
        let signature = Data(repeating: 0, count: 64)
        let transaction = StoreTransaction(
            id: id, productID: productID, signedTransaction: [header, body, signature].map(Self.base64URL).joined(separator: ".")
        )
        unfinished.append(transaction)
        bought.append(transaction)
        return .purchased(transaction)
    }

    func restore() async throws -> [String] { bought.map(\.signedTransaction) }
    func unfinishedTransactions() async -> [StoreTransaction] { unfinished }
    /// StoreKit Testing delivers nothing outside a purchase here: a stream that stays open and quiet.
    func transactionUpdates() async -> AsyncStream<StoreTransaction> { AsyncStream { _ in } }

    func finish(transactionID: String) async {
        guard unfinished.contains(where: { $0.id == transactionID }) else { return }
        unfinished.removeAll { $0.id == transactionID }
        finished.append(transactionID)
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

extension Journey {
    /// A purchase on one install is seen everywhere without opening the paywall: Bea buys Premium on her iPad (the
    /// paywall there, the purchase sent to the server and finished only once taken); her phone, open all along, hears
    /// of it on its event stream; a fresh install signs in and reports Premium at once. Needs a server taking StoreKit
    /// testing transactions for the bundle id in `FITBASE_APPSTORE_BUNDLE_ID` (the server's setting of that name);
    /// without it the fresh install still shows it knows Bea's tier from sign-in, and the purchase is left out.
    static func purchaseSeenOnAFreshInstall(_ bea: Phone, server: URL) async throws {
        let bundleID = ProcessInfo.processInfo.environment["FITBASE_APPSTORE_BUNDLE_ID"].flatMap { $0.isEmpty ? nil : $0 }
        var tier = SubscriptionTier.free
        if let bundleID {
            let store = StoreKitTestingStore(bundleID: bundleID)
            let (ipad, ipadDirectory) = try install(server: server, store: store)
            defer { try? FileManager.default.removeItem(at: ipadDirectory) }
            let app = AppModel(dependencies: ipad)
            await app.start()
            defer { app.stop() }
            try await signIn(bea, on: app)
            let paywall = PaywallModel(dependencies: ipad)
            await paywall.appear()
            let product = try require(paywall.upgradeOffers.last?.products.first, "the iPad's paywall sells Premium (\(String(describing: paywall.error)))")
            await paywall.purchase(product)
            try check(paywall.outcome == .purchased(.premium), "the purchase goes through the server (\(String(describing: paywall.error)))")
            let (finished, unfinished) = (await store.finished, await store.unfinished)
            try check(finished.count == 1 && unfinished.isEmpty, "the store's transaction is finished once the server took it")
            try await until("Bea's phone hears of the purchase on its event stream") {
                await bea.dependencies.billing.requiresUpgrade(for: .premiumContent) == nil
            }
            tier = .premium
            step("Bea bought Premium on her iPad; her phone saw it live")
        }

        let (fresh, freshDirectory) = try install(server: server, store: nil)
        defer { try? FileManager.default.removeItem(at: freshDirectory) }
        let app = AppModel(dependencies: fresh)
        await app.start()
        defer { app.stop() }
        try check(await fresh.billing.requiresUpgrade(for: .premiumContent) == .premium, "a fresh install knows no entitlement before sign-in")
        try await signIn(bea, on: app)
        let known = try? await fresh.billing.entitlement(policy: .cacheOnly)
        try check(known?.value.entitlement.tier == tier, "the fresh install knows Bea's tier from sign-in (\(String(describing: known?.value.entitlement.tier)))")
        try check(
            await fresh.billing.requiresUpgrade(for: .premiumContent) == (tier == .premium ? nil : .premium),
            "premium videos are \(tier == .premium ? "open" : "locked") on the fresh install without a paywall opened"
        )
        step(
            "A fresh install of Bea's signed in and shows \(tier.rawValue) with no paywall opened"
                + (bundleID == nil ? " (the purchase needs a server taking StoreKit testing transactions: FITBASE_APPSTORE_BUNDLE_ID…)" : "")
        )
    }

    /// Another install of the app: its own data directory, and `store` to buy from.
    private static func install(server: URL, store: (any PurchaseProvider)?) throws -> (FitBaseDependencies, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-journey-\(UUID().uuidString)")
        let dependencies = try FitBaseDependencies.live(.init(
            serverURL: server, dataDirectory: directory, purchaseProvider: store, analytics: RecordingAnalytics(),
            timeZone: { .gmt }
        ))
        return (dependencies, directory)
    }

    /// Signs `person` in on the sign-in screen of `app`.
    private static func signIn(_ person: Phone, on app: AppModel) async throws {
        app.auth.email = person.email
        app.auth.password = password
        await app.auth.signIn()
        try check(app.auth.isSignedIn, "\(person.name) signs in on another install (\(String(describing: app.auth.error)))")
    }
}

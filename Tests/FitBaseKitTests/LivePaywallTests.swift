import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Testing

/// The paywall's products are the server's (issue 54, item 3): an app built from the README's `live(...)` arguments,
/// declaring no product, lists the server's App Store products priced by its store; without a store it lists them
/// unpriced and sells nothing; a product the server does not list is never sold.
@Suite struct LivePaywallTests {
    /// A store that sells only `selling` (as the App Store sells only the app's own products), at one price.
    actor ShelfStore: PurchaseProvider {
        struct Unreachable: Error {}

        let selling: Set<String>
        var reachable = true

        init(selling: Set<String>) { self.selling = selling }

        func setReachable(_ reachable: Bool) { self.reachable = reachable }
        func products(ids: [String]) async throws -> [StoreProduct] {
            guard reachable else { throw Unreachable() }
            return ids.filter(selling.contains).map { StoreProduct(id: $0, displayName: "Shelf \($0)", displayPrice: "$2.00") }
        }
        func purchase(productID: String, appAccountToken: UUID?) async throws -> StorePurchaseOutcome { .cancelled }
        func restore() async throws -> [String] { [] }
        func unfinishedTransactions() async -> [StoreTransaction] { [] }
        func transactionUpdates() async -> AsyncStream<StoreTransaction> { AsyncStream { _ in } }
        func finish(transactionID: String) async {}
    }

    /// The README's `live(...)`: the server, a data directory, the token store and a purchase provider — nothing else.
    static func readmeApp(server: URL, store: (any PurchaseProvider)?) throws -> (FitBaseDependencies, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-paywall-\(UUID().uuidString)")
        let dependencies = try FitBaseDependencies.live(.init(
            serverURL: server, dataDirectory: directory, tokenStore: InMemoryTokenStore(), purchaseProvider: store
        ))
        return (dependencies, directory)
    }

    @Test func anAppFromTheREADMEsArgumentsSellsTheServersProducts() async throws {
        try await LiveDevice.withServer { server, _ in
            let store = ShelfStore(selling: ["com.train.pro.monthly", "com.train.premium.monthly", "com.strengthgraceflow.yearly"])
            let (app, directory) = try Self.readmeApp(server: server, store: store)
            defer { try? FileManager.default.removeItem(at: directory) }
            // Before sign-in: the list is open to everyone.
            let offers = try await app.billing.offers()
            #expect(offers.map(\.tier) == [.free, .pro, .premium])
            #expect(offers[0].products.isEmpty)
            #expect(offers[1].products.map(\.id) == ["com.train.pro.monthly"])
            // The server's tier and period; the store's name and price; what the store does not sell is left out, and
            // so are the Stripe prices.
            #expect(offers[2].products.map(\.id) == ["com.train.premium.monthly", "com.strengthgraceflow.yearly"])
            #expect(offers[2].products.map(\.period) == [.monthly, .yearly])
            #expect(offers[2].products.allSatisfy { $0.displayPrice == "$2.00" && $0.isPurchasable && $0.tier == .premium })
            #expect(offers[2].products[1].displayName == "Shelf com.strengthgraceflow.yearly")
            #expect(offers[2].features.contains(.premiumContent) && !offers[1].features.contains(.premiumContent))

            // A store that cannot be reached prices nothing: the paywall says to try again rather than sell blind.
            await store.setReachable(false)
            await #expect(throws: KitError.offline) { try await app.billing.offers() }
        }
    }

    @Test func theProductsAreCachedAndRevalidatedWithTheirEntityTag() async throws {
        try await LiveDevice.withServer { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let premium = try await device.dependencies.billing.offers().first { $0.tier == .premium }?.products.map(\.id)
            #expect(premium == ["com.train.premium.monthly", "com.strengthgraceflow.monthly", "com.strengthgraceflow.yearly"])
            #expect(device.network.statuses("listBillingProducts") == [200])
            // Fresh: not asked again. Offline past its time to live: the copy, stale.
            _ = try await device.dependencies.billing.offers()
            #expect(device.network.count("listBillingProducts") == 1)
            device.clock.advance(by: .seconds(2 * 3_600))
            device.network.offline = true
            #expect(try await device.dependencies.billing.offers().last?.products.count == 3)
            // Back online: asked with the list's ETag, and the answer is a 304.
            device.network.offline = false
            _ = try await device.dependencies.billing.offers()
            #expect(device.network.statuses("listBillingProducts") == [200, 304])
        }
    }

    @Test func withoutAStoreThePaywallListsTheServersProductsUnpricedAndSellsNothing() async throws {
        try await LiveDevice.withServer { @MainActor server, _ in
            let (app, directory) = try Self.readmeApp(server: server, store: nil)
            defer { try? FileManager.default.removeItem(at: directory) }
            let paywall = PaywallModel(dependencies: app)
            await paywall.appear()
            #expect(paywall.error == nil)
            let products = paywall.offers.flatMap(\.products)
            #expect(products.map(\.id) == [
                "com.train.pro.monthly", "com.train.premium.monthly", "com.strengthgraceflow.monthly", "com.strengthgraceflow.yearly",
            ])
            #expect(products.allSatisfy { $0.displayPrice == nil && !$0.isPurchasable })
            #expect(products.last?.displayName == "Premium (yearly)")
            await paywall.purchase(try #require(products.first))
            #expect(paywall.error?.kind == .purchaseFailed && paywall.error?.isRetryable == false && paywall.outcome == nil)
            await #expect(throws: KitError.self) { try await app.billing.purchase(productID: "com.train.pro.monthly") }
        }
    }

    @Test func aHandDeclaredProductTheServerDoesNotListIsNeverSold() async throws {
        try await LiveDevice.withServer(billing: LiveDevice.storeKitTesting) { server, _ in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            let user = try await device.signUp()
            // The app's old product, still in App Store Connect: the store would sell it, the server grants nothing for it.
            await device.store.set(.purchased(try XcodeTransactions.transaction("com.train.premium.lifetime", for: user.id)))
            await #expect(throws: KitError(.notFound, message: "This subscription is not available.", isRetryable: false)) {
                try await device.dependencies.billing.purchase(productID: "com.train.premium.lifetime")
            }
            // The store was never asked: nobody was charged for a product that grants nothing.
            #expect(await device.store.unfinished.isEmpty)
            #expect(device.network.count("submitAppStoreTransaction") == 0)
            // The list was asked again before refusing (the file may have changed since it was cached).
            #expect(device.network.statuses("listBillingProducts") == [200, 304])
        }
    }
}

import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// The paywall's products come from the server's products file (issue 54, item 3): `listBillingProducts` answers
/// every product with its store, id, tier and period, to anyone, and revalidates with its entity tag.
@Suite struct BillingProductsTests {
    static func get(_ client: any TestClientProtocol, token: String? = nil, ifNoneMatch: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
        return try await client.execute(uri: "/v1/billing/products", method: .get, headers: headers, body: nil)
    }

    static func products(_ response: TestResponse) throws -> [BillingProduct] {
        struct List: Decodable { let items: [BillingProduct] }
        return try JSONDecoder().decode(List.self, from: Data(response.body.readableBytesView)).items
    }

    @Test(arguments: TestEngines.all)
    func anyoneReadsTheProductsFileAsItListsThem(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let anonymous = try await Self.get(client)
            #expect(anonymous.status == .ok)
            let listed = try Self.products(anonymous)
            let file = try ProductCatalog.load(path: nil)
            #expect(listed == file.products)
            #expect(listed.first == BillingProduct(store: .appStore, productID: "com.train.pro.monthly", tier: .pro, period: .monthly))
            #expect(listed.contains(BillingProduct(store: .stripe, productID: "price_strengthgraceflow_yearly", tier: .premium, period: .yearly)))

            // Signed in, the same list: it names no one.
            let account = try await client.signUp()
            let signedIn = try await Self.get(client, token: account.accessToken)
            let listedSignedIn = try Self.products(signedIn)
            #expect(listedSignedIn == listed)
            #expect(signedIn.headers[.eTag] == anonymous.headers[.eTag])
        }
    }

    @Test(arguments: TestEngines.all)
    func theListRevalidatesWithItsEntityTag(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let first = try await Self.get(client)
            let tag = try #require(first.headers[.eTag])
            #expect(first.headers[.cacheControl] == "private, no-cache")
            let again = try await Self.get(client, ifNoneMatch: tag)
            #expect(again.status == .notModified && again.body.readableBytes == 0 && again.headers[.eTag] == tag)
            let stale = try await Self.get(client, ifNoneMatch: "\"stale\"")
            #expect(stale.status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func aDeploymentsOwnProductsFileIsTheListAppsSell(engine: DatabaseEngine) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("products-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(
            #"""
            {"tiers": {"free": ["basicPlans"], "pro": ["basicPlans", "customPlans"], "premium": ["basicPlans", "customPlans", "premiumContent"]},
             "products": [
               {"store": "appStore", "productId": "app.example.premium.week", "tier": "premium", "period": "weekly"},
               {"store": "stripe", "productId": "price_pro_half", "tier": "pro", "period": "semiannual"}
             ]}
            """#.utf8
        ).write(to: file)
        var options = TestAppOptions()
        options.billing = BillingConfiguration(productsFile: file.path)
        try await withApp(engine, options: options) { client, _ in
            let listed = try Self.products(try await Self.get(client))
            #expect(listed == [
                BillingProduct(store: .appStore, productID: "app.example.premium.week", tier: .premium, period: .weekly),
                BillingProduct(store: .stripe, productID: "price_pro_half", tier: .pro, period: .semiannual),
            ])
        }
    }
}

import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// The server enforces what the entitlement allows: plans beyond one, detailed statistics, premium videos.
@Suite struct FeatureGatingTests {
    static func planBody(_ name: String, _ workout: String) -> [String: Any] {
        ["name": name, "startDate": "2026-01-05", "daysPerWeek": 2, "weeklyWorkouts": [["week": 1, "days": [["day": 1, "workoutIds": [workout]]]]]]
    }

    @Test(arguments: TestEngines.all)
    func aFreeAccountKeepsOnePlanAndBasicStatsUntilItUpgrades(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let database = app.database
            let premiumWorkout = try #require(CatalogTests.fixture.first { $0.isPremium })
            let workout = CatalogTests.fixture[0]
            try await CatalogImporter.importCatalog(([workout, premiumWorkout], []), into: database, now: .storageNow)
            let account = try await client.signUp()
            let token = account.accessToken

            let features = try json(try await client.json(.get, "/v1/features", token: token))
            #expect(features["tier"] as? String == "free")
            let byName = Dictionary(uniqueKeysWithValues: try #require(features["features"] as? [[String: Any]]).map { ($0["feature"] as? String ?? "", $0) })
            #expect(byName["workoutTracking"]?["allowed"] as? Bool == true)
            #expect(byName["customPlans"]?["allowed"] as? Bool == false && byName["customPlans"]?["requiredTier"] as? String == "pro")
            #expect(byName["premiumContent"]?["requiredTier"] as? String == "premium")
            #expect(byName.count == Feature.allCases.count)

            #expect(try await client.json(.post, "/v1/plans", body: Self.planBody("First", workout.id.description), token: token).status == .created)
            let second = try await client.json(.post, "/v1/plans", body: Self.planBody("Second", workout.id.description), token: token)
            #expect(second.status.code == 402)
            #expect(second.headers[.contentType] == "application/problem+json")
            try expectProblem(second, .upgradeRequired)
            #expect(try json(second)["requiredTier"] as? String == "pro")
            // Sync push is held to the same rule, mutation by mutation.
            let push = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": [[
                "mutationId": "m-second-plan", "collection": "plans", "id": UUID().uuidString, "op": "upsert", "updatedAt": "2026-01-05T10:00:00Z",
                "data": Self.planBody("Offline second", workout.id.description),
            ]]], token: token))
            let result = try #require((push["results"] as? [[String: Any]])?.first)
            #expect(result["status"] as? String == "rejected")
            #expect(problemCode(in: result) == .upgradeRequired)

            let basic = try json(try await client.json(.get, "/v1/history/stats", token: token))
            #expect(basic["totalWorkouts"] as? Int == 0 && basic["byType"] == nil)
            let detailed = try await client.json(.get, "/v1/history/stats?detail=full", token: token)
            #expect(detailed.status.code == 402)
            #expect(try json(detailed)["requiredTier"] as? String == "pro")
            #expect(try json(try await client.json(.get, "/v1/workouts/\(premiumWorkout.id)", token: token))["videoURL"] == nil)

            try await app.testDatabase.grant(.pro, toUser: account.id)
            #expect(try await client.json(.post, "/v1/plans", body: Self.planBody("Second", workout.id.description), token: token).status == .created)
            let full = try json(try await client.json(.get, "/v1/history/stats?detail=full", token: token))
            #expect(full["byType"] != nil && (full["weekly"] as? [Any])?.count == 12)
            #expect(try json(try await client.json(.get, "/v1/workouts/\(premiumWorkout.id)", token: token))["videoURL"] == nil)
            let status = try json(try await client.json(.get, "/v1/subscription", token: token))
            #expect(status["tier"] as? String == "pro" && status["source"] as? String == "promotional" && status["status"] as? String == "active" && status["willRenew"] as? Bool == false)

            try await app.testDatabase.grant(.premium, toUser: account.id)
            let unlocked = try json(try await client.json(.get, "/v1/workouts/\(premiumWorkout.id)", token: token))
            #expect(unlocked["videoURL"] as? String == premiumWorkout.videoURL)
            #expect(try json(try await client.json(.get, "/v1/features", token: token))["tier"] as? String == "premium")
        }
    }

    @Test func productsFilesNameTheEntryAtFault() throws {
        func reason(_ text: String) -> String? {
            do {
                _ = try ProductCatalog.parse(Data(text.utf8))
                return nil
            } catch {
                return error.reason
            }
        }
        let tiers = #""tiers": {"free": ["basicPlans"], "pro": ["basicPlans", "customPlans"], "premium": ["basicPlans", "customPlans", "premiumContent"]}"#
        let monthly = #""period": "monthly""#
        #expect(reason("{\(tiers), \"products\": [{\"store\": \"appStore\", \"productId\": \"a\", \"tier\": \"pro\", \(monthly)}]}") == nil)
        #expect(reason("{\(tiers), \"products\": [{\"store\": \"appStore\", \"productId\": \"a\", \"tier\": \"gold\", \(monthly)}]}") == "products[0].tier: must be pro or premium")
        #expect(reason("{\(tiers), \"products\": [{\"store\": \"playStore\", \"productId\": \"a\", \"tier\": \"pro\", \(monthly)}]}") == "products[0].store: must be appStore or stripe")
        #expect(reason("{\(tiers), \"products\": [{\"store\": \"stripe\", \"productId\": \"p\", \"tier\": \"pro\", \(monthly)}, {\"store\": \"stripe\", \"productId\": \"p\", \"tier\": \"premium\", \(monthly)}]}")?.hasPrefix("products[1].productId") == true)
        // The paywall shows how often a product renews: a product without its period is refused at start.
        #expect(
            reason("{\(tiers), \"products\": [{\"store\": \"appStore\", \"productId\": \"a\", \"tier\": \"pro\"}]}")
                == "products[0].period: must be one of weekly, monthly, quarterly, semiannual, yearly"
        )
        #expect(reason("{\(tiers), \"products\": [{\"store\": \"appStore\", \"productId\": \"a\", \"tier\": \"pro\", \"period\": \"daily\"}]}")?.hasPrefix("products[0].period") == true)
        #expect(reason(#"{"tiers": {"free": ["basicPlans"], "pro": ["flying"], "premium": []}, "products": []}"#)?.hasPrefix("tiers.pro[0]") == true)
        #expect(reason(#"{"tiers": {"free": ["basicPlans"], "pro": ["customPlans"], "premium": ["customPlans"]}, "products": []}"#)?.hasPrefix("tiers:") == true)
        #expect(reason("[]") == "not a JSON object")

        let standard = try ProductCatalog.load(path: nil)
        #expect(standard.tier(of: "com.train.pro.monthly", in: .appStore) == .pro)
        #expect(standard.tier(of: "com.strengthgraceflow.yearly", in: .appStore) == .premium)
        #expect(standard.products.first == BillingProduct(store: .appStore, productID: "com.train.pro.monthly", tier: .pro, period: .monthly))
        #expect(standard.products.filter { $0.period == .yearly }.map(\.productID) == ["com.strengthgraceflow.yearly", "price_strengthgraceflow_yearly"])
        #expect(standard.tierFeatures == .standard)
        #expect(throws: ProductCatalogError.self) { try ProductCatalog.load(path: "/nonexistent/products.json") }
    }

    @Test func billingSettingsAreCheckedAtStart() throws {
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_APPSTORE_BUNDLE_ID": "com.example.train"]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_APPSTORE_ENVIRONMENT": "Staging"]) }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.resolve(environment: ["FITBASE_STRIPE_WEBHOOK_SECRETS": "sk_live_oops"]) }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.resolve(environment: [
                "FITBASE_APPSTORE_BUNDLE_ID": "com.example.train", "FITBASE_APPSTORE_APP_APPLE_ID": "1", "FITBASE_APPSTORE_ALLOW_XCODE": "true",
            ])
        }
        let production = try ServerConfiguration.resolve(environment: [
            "FITBASE_APPSTORE_BUNDLE_ID": "com.example.train", "FITBASE_APPSTORE_APP_APPLE_ID": "1234567890",
            "FITBASE_STRIPE_WEBHOOK_SECRETS": "whsec_a, whsec_b",
        ])
        #expect(production.billing.appStoreEnvironment == "Production" && production.billing.stripeWebhookSecrets == ["whsec_a", "whsec_b"])
        // The bundled Apple Root CA – G3 is the default trust root.
        #expect(try AppStoreSignedDataVerifier.load(production.billing) != nil)
        var unreadable = production.billing
        unreadable.appStoreRootCertificateFiles = ["/nonexistent/root.cer"]
        #expect(throws: ConfigurationError.self) { try AppStoreSignedDataVerifier.load(unreadable) }
    }
}

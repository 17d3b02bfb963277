import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// The SDK's view of the entitlement against a live server: refreshed, published, and kept for offline launches.
@Suite struct EntitlementsTests {
    @Test(arguments: TestEngines.all)
    func theEntitlementIsRefreshedCachedAndReadOfflineForItsUserOnly(engine: DatabaseEngine) async throws {
        try await withLiveApp(engine) { server, database in
            let cache = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-entitlement-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: cache) }
            let tokens = InMemoryTokenStore()
            let fitbase = FitBaseClient(serverURL: server, tokenStore: tokens)
            let user = try await fitbase.signUp(email: "ent-\(UUID().uuidString.prefix(8))@example.com", password: "correct horse battery")

            let entitlements = Entitlements(client: fitbase, cacheFile: cache)
            #expect(await entitlements.current() == nil)
            #expect(await entitlements.requiresUpgrade(for: .customPlans) == .pro)  // nothing known yet: the standard tiers
            var updates = await entitlements.updates().makeAsyncIterator()
            let free = try await entitlements.refresh()
            #expect(free.entitlement.tier == .free && free.entitlement.status == .none)
            #expect(await updates.next() == free)
            #expect(await entitlements.isAllowed(.workoutTracking))
            #expect(await entitlements.requiresUpgrade(for: .premiumContent) == .premium)

            try await database.grant(.premium, toUser: user.id.description)
            let premium = try await entitlements.refresh()
            #expect(premium.entitlement.tier == .premium && premium.entitlement.source == .promotional)
            #expect(await entitlements.requiresUpgrade(for: .premiumContent) == nil)
            #expect(await updates.next() == premium)

            // Next launch, offline: the cached answer is there for the same user, never for another.
            let relaunched = Entitlements(client: fitbase, cacheFile: cache)
            #expect(await relaunched.current()?.entitlement.tier == .premium)
            await #expect(throws: FitBaseError.self) { try await relaunched.submitAppStoreTransaction("not.a.jws") }
            try await fitbase.signUp(email: "ent-\(UUID().uuidString.prefix(8))@example.com", password: "correct horse battery")
            #expect(await relaunched.current() == nil)
            #expect(await relaunched.isAllowed(.premiumContent) == false)
        }
    }
}

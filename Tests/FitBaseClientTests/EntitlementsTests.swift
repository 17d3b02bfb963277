import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
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

/// The entitlement is revalidated, not downloaded again: a refresh sends the cached answers' `ETag`s, and what has not
/// changed comes back as a 304 and is kept.
@Suite struct EntitlementRevalidationTests {
    /// The default transport, recording each request's `If-None-Match` and each answer's status by operation.
    final class Recording: ClientTransport, Sendable {
        private let base = FitBaseClient.defaultTransport()
        private let seen = Mutex<[(operation: String, ifNoneMatch: String?, status: Int)]>([])

        var exchanges: [(operation: String, ifNoneMatch: String?, status: Int)] { seen.withLock { $0 } }
        func forget() { seen.withLock { $0 = [] } }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            let answer = try await base.send(request, body: body, baseURL: baseURL, operationID: operationID)
            seen.withLock { $0.append((operationID, request.headerFields[.ifNoneMatch], answer.0.status.code)) }
            return answer
        }
    }

    @Test func anUnchangedEntitlementCostsTwo304sAndAChangedOneIsRead() async throws {
        try await withLiveApp(.sqlite) { server, database in
            let transport = Recording()
            let fitbase = FitBaseClient(serverURL: server, transport: transport)
            let user = try await fitbase.signUp(email: "etag-\(UUID().uuidString.prefix(8))@example.com", password: "correct horse battery")
            let entitlements = Entitlements(client: fitbase)
            let first = try await entitlements.refresh()
            #expect(first.subscriptionETag != nil && first.featuresETag != nil)

            transport.forget()
            let again = try await entitlements.refresh()
            let answers = transport.exchanges.filter { ["getSubscription", "getFeatures"].contains($0.operation) }
            #expect(answers.map(\.status) == [304, 304])
            #expect(answers.map(\.ifNoneMatch) == [first.subscriptionETag, first.featuresETag])
            #expect(again.entitlement == first.entitlement && again.features == first.features)

            try await database.grant(.premium, toUser: user.id.description)
            transport.forget()
            let premium = try await entitlements.refresh()
            #expect(transport.exchanges.filter { ["getSubscription", "getFeatures"].contains($0.operation) }.map(\.status) == [200, 200])
            #expect(premium.entitlement.tier == .premium && premium.features[.premiumContent]?.allowed == true)
        }
    }
}

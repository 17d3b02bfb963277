import FitBaseClient
import FitBaseCore
@testable import FitBaseKit
import Foundation
import HTTPTypes
import OpenAPIRuntime
import StoreKit
import Synchronization
import Testing

/// What StoreKit delivers outside a purchase, through ``StoreKitPurchaseProvider`` and ``LiveBillingService`` to a
/// server: finished once the server took it, left unfinished (and delivered again) when it refused it. (In the
/// provider's suite: StoreKit's state is one per process, so its tests run one at a time.)
extension StoreKitPurchaseProviderTests {
    /// The server's App Store endpoints: every signed transaction it is sent, taken or refused as told.
    final class AppStoreServer: ClientTransport, Sendable {
        let submitted = Mutex<[String]>([])
        let refusing = Mutex(false)

        func send(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
        ) async throws -> (HTTPResponse, HTTPBody?) {
            switch operationID {
            case "submitAppStoreTransaction":
                let data = try await Data(collecting: body ?? HTTPBody(), upTo: 1 << 20)
                let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
                submitted.withLock { $0.append(json?["signedTransaction"] as? String ?? "") }
                guard !refusing.withLock({ $0 }) else {
                    return answer(409, #"{"type":"about:blank","title":"Conflict","status":409,"code":"conflict"}"#)
                }
                return answer(200, Self.subscription)
            case "getSubscription": return answer(200, Self.subscription)
            case "getFeatures": return answer(200, #"{"tier":"pro","features":[]}"#)
            default: return answer(404, #"{"type":"about:blank","title":"Not found","status":404,"code":"not_found"}"#)
            }
        }

        static let subscription = #"{"tier":"pro","status":"active","willRenew":true,"features":[],"subscriptions":[]}"#

        private func answer(_ status: Int, _ json: String) -> (HTTPResponse, HTTPBody?) {
            let type = status < 400 ? "application/json" : "application/problem+json"
            return (HTTPResponse(status: .init(code: status), headerFields: [.contentType: type]), HTTPBody(json))
        }
    }

    @Test func aTransactionIsFinishedOnlyOnceTheServerTookIt() async throws {
        let server = AppStoreServer()
        let session = StoredSession(
            userID: UserID(rawValue: UUID()), accessToken: "access", refreshToken: "refresh", accessTokenExpiresAt: .distantFuture)
        let client = FitBaseClient(
            serverURL: URL(string: "https://fitbase.test")!, tokenStore: InMemoryTokenStore(session), transport: server)
        let store = StoreKitPurchaseProvider()
        let billing = LiveBillingService(
            client: client, entitlements: Entitlements(client: client), store: store,
            cache: ResponseCache(client: client, store: try LocalStore.inMemory(), clock: SystemKitClock()), ttl: .seconds(60),
            clock: SystemKitClock())
        var updates = await store.transactionUpdates().makeAsyncIterator()
        for _ in 0..<100 where _StoreKitShim.listenerCount == 0 { try await Task.sleep(for: .milliseconds(10)) }

        let renewal = _StoreKitShim.deliverUpdate(productID: "pro.monthly")
        try await billing.deliver(try #require(await updates.next()))
        #expect(server.submitted.withLock { $0 } == [renewal.jws])
        #expect(_StoreKitShim.isFinished(renewal.id))

        server.refusing.withLock { $0 = true }
        let refused = _StoreKitShim.deliverUpdate(productID: "pro.monthly")
        let transaction = try #require(await updates.next())
        await #expect(throws: KitError.self) { try await billing.deliver(transaction) }
        #expect(!_StoreKitShim.isFinished(refused.id))

        // The next refresh (the next launch, the next sign-in) sends what StoreKit still lists as unfinished.
        server.refusing.withLock { $0 = false }
        await billing.refreshEntitlement()
        #expect(server.submitted.withLock { $0 } == [renewal.jws, refused.jws, refused.jws])
        #expect(_StoreKitShim.isFinished(refused.id))
    }
}

import FitBaseAPI
import FitBaseKit
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import OpenAPIRuntime
import Synchronization
import Testing

@testable import FitBaseServer

/// A transport that can be switched off (no network), and counts the requests of each operation and the statuses
/// they were answered with.
final class SwitchableTransport: ClientTransport, Sendable {
    struct Offline: Error {}

    private let base = FitBaseClient.defaultTransport()
    private let state = Mutex((offline: false, held: Set<String>(), counts: [String: Int](), statuses: [String: [Int]](), server: URL?.none))

    /// Where links naming the test server's public URL (`http://127.0.0.1:0`, its port unknown when it starts) go: the
    /// server itself.
    var server: URL? {
        get { state.withLock { $0.server } }
        set { state.withLock { $0.server = newValue } }
    }

    var offline: Bool {
        get { state.withLock { $0.offline } }
        set { state.withLock { $0.offline = newValue } }
    }

    /// Operations that fail as if offline while the rest go through (a test that needs a change not synced yet holds
    /// the push, which the engine may otherwise send at any moment).
    var held: Set<String> {
        get { state.withLock { $0.held } }
        set { state.withLock { $0.held = newValue } }
    }

    func count(_ operationID: String) -> Int { state.withLock { $0.counts[operationID] ?? 0 } }

    /// The statuses the server answered `operationID` with, in order.
    func statuses(_ operationID: String) -> [Int] { state.withLock { $0.statuses[operationID] ?? [] } }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let offline = state.withLock { state in
            state.counts[operationID, default: 0] += 1
            return state.offline || state.held.contains(operationID)
        }
        if offline { throw Offline() }
        let target = baseURL.port == 0 ? (server ?? baseURL) : baseURL
        let answer = try await base.send(request, body: body, baseURL: target, operationID: operationID)
        state.withLock { $0.statuses[operationID, default: []].append(answer.0.status.code) }
        return answer
    }
}

/// A purchase provider answering with a given outcome, and keeping transactions unfinished as StoreKit does: those
/// bought and those delivered (``deliver(_:)``) until they are finished; a new listener first gets those left
/// unfinished, as `Transaction.updates` does at launch.
actor ScriptedStore: PurchaseProvider {
    var outcome: StorePurchaseOutcome = .cancelled
    var restored: [String] = []
    private(set) var unfinished: [StoreTransaction] = []
    private(set) var finished: [String] = []
    private let listeners = ValueStreams<StoreTransaction>()

    func set(_ outcome: StorePurchaseOutcome) { self.outcome = outcome }
    func products(ids: [String]) async throws -> [StoreProduct] {
        ids.map { StoreProduct(id: $0, displayName: "Store \($0)", displayPrice: "$1.00") }
    }
    func purchase(productID: String, appAccountToken: UUID?) async throws -> StorePurchaseOutcome {
        if case .purchased(let transaction) = outcome { unfinished.append(transaction) }
        return outcome
    }
    func restore() async throws -> [String] { restored }

    /// A transaction arriving outside a purchase (a renewal, an Ask to Buy approval, a purchase on another device).
    func deliver(_ transaction: StoreTransaction) {
        unfinished.append(transaction)
        listeners.send(transaction)
    }
    func unfinishedTransactions() async -> [StoreTransaction] { unfinished }
    func transactionUpdates() async -> AsyncStream<StoreTransaction> {
        let (stream, continuation) = listeners.make(buffer: 64)
        for transaction in unfinished { continuation.yield(transaction) }
        return stream
    }
    func finish(transactionID: String) async {
        guard unfinished.contains(where: { $0.id == transactionID }) else { return }
        unfinished.removeAll { $0.id == transactionID }
        finished.append(transactionID)
    }
}

/// StoreKit testing transactions as Xcode writes them: environment `Xcode`, not signed by the App Store, taken by a
/// server that allows them (``LiveDevice/storeKitTesting``).
enum XcodeTransactions {
    static let bundleID = "com.example.train"

    /// A month of `productID` bought now for `user`, as the store hands it over: a new subscription, or a renewal of
    /// the one whose first transaction was `originalID`.
    static func transaction(_ productID: String, for user: UserID, originalID: String? = nil) throws -> StoreTransaction {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let id = String(UInt64.random(in: 1_000_000_000...9_999_999_999))
        let payload: [String: Any] = [
            "transactionId": id, "originalTransactionId": originalID ?? id, "bundleId": bundleID, "productId": productID,
            "purchaseDate": now, "originalPurchaseDate": now, "expiresDate": now + 30 * 86_400_000, "signedDate": now,
            "type": "Auto-Renewable Subscription", "appAccountToken": user.description, "inAppOwnershipType": "PURCHASED",
            "environment": "Xcode", "quantity": 1,
        ]
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": "Apple_Xcode_Key", "typ": "JWT"])
        let body = try JSONSerialization.data(withJSONObject: payload)
        return StoreTransaction(id: id, productID: productID, signedTransaction: "\(base64URL(header)).\(base64URL(body)).\(base64URL(Data(repeating: 1, count: 64)))")
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// The live services of one device against a real `fitbase serve` on a socket (SQLite).
struct LiveDevice {
    let dependencies: FitBaseDependencies
    let network: SwitchableTransport
    let directory: URL
    let keys: InMemoryKeyProvider
    let analytics: RecordingAnalytics
    let clock: TestKitClock
    let store: ScriptedStore
    let tokens: InMemoryTokenStore
    let server: URL

    static let password = "correct horse battery"

    /// A new install: its own data directory, keys, session and store.
    init(server: URL, clock: TestKitClock = TestKitClock(now: Date())) throws {
        try self.init(
            server: server, clock: clock, directory: FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-kit-\(UUID().uuidString)"),
            keys: InMemoryKeyProvider(), tokens: InMemoryTokenStore(), store: ScriptedStore()
        )
    }

    /// The same install launched again: its data directory, keys, session and store, a new container and network.
    func relaunch() throws -> LiveDevice {
        try LiveDevice(server: server, clock: clock, directory: directory, keys: keys, tokens: tokens, store: store)
    }

    private init(server: URL, clock: TestKitClock, directory: URL, keys: InMemoryKeyProvider, tokens: InMemoryTokenStore, store: ScriptedStore) throws {
        let network = SwitchableTransport()
        network.server = server
        let analytics = RecordingAnalytics()
        self.network = network
        self.directory = directory
        self.keys = keys
        self.analytics = analytics
        self.clock = clock
        self.store = store
        self.tokens = tokens
        self.server = server
        dependencies = try FitBaseDependencies.live(.init(
            serverURL: server, dataDirectory: directory, tokenStore: tokens, keyProvider: keys, purchaseProvider: store,
            // The test server's public URL (FITBASE_PUBLIC_URL): its invite links name port 0.
            publicURLs: [URL(string: "http://127.0.0.1:0")!], analytics: analytics, timeZone: { .gmt }, transport: network, clock: clock,
            bundleID: "app.fitbase.kit-tests"
        ))
    }

    /// Signs up a new account.
    @discardableResult
    func signUp() async throws -> SignedInUser {
        try await dependencies.auth.signUp(email: "kit-\(UUID().uuidString.prefix(8))@example.com", password: Self.password, displayName: "Kit")
    }

    /// The store's SQLite file and its journals, as bytes.
    func storeBytes() throws -> Data {
        var bytes = Data()
        for suffix in ["", "-wal", "-journal", "-shm"] {
            let url = directory.appendingPathComponent("fitbase.sqlite" + suffix)
            if let data = try? Data(contentsOf: url) { bytes.append(data) }
        }
        return bytes
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a live server (demo catalog loaded).
    static func withServer(
        billing: BillingConfiguration = .init(), _ body: @escaping @Sendable (URL, TestDatabase) async throws -> Void
    ) async throws {
        try await withLiveApp(.sqlite, demoCatalog: true, billing: billing, body)
    }

    /// A server taking StoreKit testing transactions (``XcodeTransactions``) for the tests' bundle id.
    static let storeKitTesting = BillingConfiguration(appStoreBundleID: XcodeTransactions.bundleID, appStoreEnvironment: "Sandbox", appStoreAllowsXcode: true)
}

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

/// A transport that can be switched off (no network), and counts the requests of each operation.
final class SwitchableTransport: ClientTransport, Sendable {
    struct Offline: Error {}

    private let base = FitBaseClient.defaultTransport()
    private let state = Mutex((offline: false, counts: [String: Int]()))

    var offline: Bool {
        get { state.withLock { $0.offline } }
        set { state.withLock { $0.offline = newValue } }
    }

    func count(_ operationID: String) -> Int { state.withLock { $0.counts[operationID] ?? 0 } }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let offline = state.withLock { state in
            state.counts[operationID, default: 0] += 1
            return state.offline
        }
        if offline { throw Offline() }
        return try await base.send(request, body: body, baseURL: baseURL, operationID: operationID)
    }
}

/// A purchase provider answering with a given signed transaction.
actor ScriptedStore: PurchaseProvider {
    var outcome: StorePurchaseOutcome = .cancelled
    var restored: [String] = []
    func set(_ outcome: StorePurchaseOutcome) { self.outcome = outcome }
    func products(ids: [String]) async throws -> [StoreProduct] {
        ids.map { StoreProduct(id: $0, displayName: "Store \($0)", displayPrice: "$1.00") }
    }
    func purchase(productID: String, appAccountToken: UUID?) async throws -> StorePurchaseOutcome { outcome }
    func restore() async throws -> [String] { restored }
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

    static let password = "correct horse battery"

    init(server: URL, clock: TestKitClock = TestKitClock(now: Date())) throws {
        let network = SwitchableTransport()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-kit-\(UUID().uuidString)")
        let keys = InMemoryKeyProvider()
        let analytics = RecordingAnalytics()
        let store = ScriptedStore()
        self.network = network
        self.directory = directory
        self.keys = keys
        self.analytics = analytics
        self.clock = clock
        self.store = store
        dependencies = try FitBaseDependencies.live(.init(
            serverURL: server, dataDirectory: directory, keyProvider: keys, purchaseProvider: store,
            products: [SubscriptionProduct(id: "com.train.premium.monthly", tier: .premium, displayName: "Premium", displayPrice: "$9.99", period: .monthly)],
            // The test server's public URL (FITBASE_PUBLIC_URL): its invite links name port 0.
            publicURLs: [URL(string: "http://127.0.0.1:0")!], analytics: analytics, timeZone: { .gmt }, transport: network, clock: clock,
            bundleID: "app.fitbase.kit-tests"
        ))
    }

    /// Signs up a new account.
    @discardableResult
    func signUp() async throws -> AccountUser {
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
    static func withServer(_ body: @escaping @Sendable (URL, TestDatabase) async throws -> Void) async throws {
        try await withLiveApp(.sqlite, demoCatalog: true, body)
    }
}

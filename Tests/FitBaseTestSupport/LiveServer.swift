import FitBaseServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Runs `body` with `app` listening on a real socket (its configured port; the test servers ask for port 0): a client
/// for it, and its URL for the SDK or a raw socket. For what the in-process router cannot show: SSE, client addresses,
/// idle timeouts, URLSession and AsyncHTTPClient.
package func withLiveServer<App: ApplicationProtocol, Value: Sendable>(
    _ app: App, _ body: @Sendable (any TestClientProtocol, URL) async throws -> Value
) async throws -> Value {
    try await app.test(.live) { client in
        let port = try #require(client.port)
        return try await body(client, URL(string: "http://127.0.0.1:\(port)")!)
    }
}

/// For the SDK's and the app layer's tests: the application as `fitbase serve` builds it, on a fresh database of
/// `engine` (with the demo catalog and billing settings when asked) and a real socket; `body` gets its URL and the
/// database.
package func withLiveApp(
    _ engine: DatabaseEngine, demoCatalog: Bool = false, billing: BillingConfiguration = .init(),
    _ body: @escaping @Sendable (URL, TestDatabase) async throws -> Void
) async throws {
    try await TestDatabase.with(engine, migrated: true) { database in
        let app = try await buildApplication(configuration: .testing(database, demoCatalog: demoCatalog, billing: billing), logger: TestDatabase.logger)
        try await withLiveServer(app) { _, url in try await body(url, database) }
    }
}

import FitBaseTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization

@testable import FitBaseServer

/// What a test's application differs by; the defaults are ``ServerConfiguration/testing(_:maxBodyBytes:demoCatalog:identityProviders:languageModel:billing:rateLimits:)``'s.
///
/// It lives here rather than in `FitBaseTestSupport` because it carries the server's internal types (the `Mailer`, and
/// the `ServerFoundation` a ``TestApp`` hands over): the support target can see them through `@testable import`, but
/// cannot name them in declarations the test targets see.
struct TestAppOptions: Sendable {
    /// Wait until no other test holds a database: a load test (see `TestAdmission`).
    var exclusive = false
    /// Listen on a real socket instead of answering in-process: for SSE, client addresses and idle timeouts.
    var live = false
    var maxBodyBytes = 1 << 20
    var demoCatalog = false
    var identityProviders = IdentityProvidersConfiguration()
    var languageModel: LanguageModelConfiguration?
    var billing = BillingConfiguration()
    var rateLimits = RateLimitConfiguration.testing
    /// Where e-mail goes (a ``RecordingMailer``); nil: as configured.
    var mailer: (any Mailer)?
    /// Where pushes go (a `RecordingPushProvider`); nil: as configured.
    var pushProvider: (any PushProvider)?
    /// Whether the ``DirectRoute``s answer (false: the generated handlers answer everything).
    var directRoutes = true
    /// The application's clock: a ``MovableClock`` a test moves instead of sleeping; the system's by default.
    var clock = ServerClock.system
    /// The data directory; nil: the test database's. Each instance of a deployment has its own.
    var dataDirectory: String?
    /// The master key the environment gives (base64); nil: the one in the data directory's key file, made on first start.
    var masterKey: String?
    /// Any other setting.
    var configure: @Sendable (inout ServerConfiguration) -> Void = { _ in }
}

/// The application a test runs against.
struct TestApp: Sendable {
    /// The throw-away database it runs on.
    let testDatabase: TestDatabase
    /// What it opened: its own database pool (`foundation.database`), the vault, the master key…
    let foundation: ServerFoundation
    /// Where it listens, when it is live.
    let url: URL?

    /// The application's own database pool.
    var database: Database { foundation.database }
    var configuration: ServerConfiguration { foundation.configuration }
}

/// Runs `test` against the real application on a fresh database of `engine`.
func withApp(
    _ engine: DatabaseEngine, options: TestAppOptions = .init(),
    _ test: @escaping @Sendable (any TestClientProtocol, TestApp) async throws -> Void
) async throws {
    try await TestDatabase.with(engine, exclusive: options.exclusive, migrated: true) { testDatabase in
        try await withApp(on: testDatabase, options: options, test)
    }
}

/// Runs `test` against an application on `testDatabase`, which a test may already have used: an instance restarted, or
/// one of several instances sharing a database.
@discardableResult
func withApp<Value: Sendable>(
    on testDatabase: TestDatabase, options: TestAppOptions = .init(),
    _ test: @escaping @Sendable (any TestClientProtocol, TestApp) async throws -> Value
) async throws -> Value {
    var configuration = ServerConfiguration.testing(
        testDatabase, maxBodyBytes: options.maxBodyBytes, demoCatalog: options.demoCatalog, identityProviders: options.identityProviders,
        languageModel: options.languageModel, billing: options.billing, rateLimits: options.rateLimits
    )
    if let dataDirectory = options.dataDirectory { configuration.dataDirectory = dataDirectory }
    if let masterKey = options.masterKey { configuration.identityProviders.masterKey = masterKey }
    options.configure(&configuration)
    var opened: ServerFoundation?
    let app = try await buildApplication(
        configuration: configuration, logger: TestDatabase.logger, mailer: options.mailer, pushProvider: options.pushProvider,
        directRoutes: options.directRoutes, clock: options.clock, opened: { opened = $0 }
    )
    guard let foundation = opened else { throw ApplicationNotOpened() }
    if options.live {
        return try await withLiveServer(app) { client, url in
            try await test(client, TestApp(testDatabase: testDatabase, foundation: foundation, url: url))
        }
    }
    return try await app.test(.router) { client in
        try await test(client, TestApp(testDatabase: testDatabase, foundation: foundation, url: nil))
    }
}

extension TestAppOptions {
    /// The options of one instance of a deployment whose instances share a database: its own data directory, the
    /// deployment's master key (nil: the data directory's key file).
    static func instance(_ dataDirectory: String, masterKey: String?, live: Bool = false) -> TestAppOptions {
        var options = TestAppOptions()
        options.dataDirectory = dataDirectory
        options.masterKey = masterKey
        options.live = live
        return options
    }
}

/// `buildApplication` returned without handing over its foundation.
private struct ApplicationNotOpened: Error {}

/// The machine's clock moved by as much as a test asks: hand ``serverClock`` to ``TestAppOptions/clock`` and call
/// ``advance(by:)`` where a test would otherwise sleep for time to pass.
final class MovableClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)

    /// Moves the clock forward.
    func advance(by seconds: TimeInterval) {
        offset.withLock { $0 += seconds }
    }

    var serverClock: ServerClock {
        ServerClock { [self] in Date.now.addingTimeInterval(offset.withLock { $0 }) }
    }
}

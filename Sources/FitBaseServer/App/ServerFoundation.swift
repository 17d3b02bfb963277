import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ServiceLifecycle

/// What every feature shares: the database pools, the health data keys and the vault over them, the audit log, the
/// outbound HTTP client, mail, the session signer and the user's profile.
///
/// ``open(configuration:logger:mailer:clock:ids:)`` checks everything that can fail on configuration (the master key against
/// the stored data keys) while opening; once it returns, the caller owns the pools and the client until the
/// application's services take them over (``services``), or hands them back with ``close()`` if it fails before that.
struct ServerFoundation: Sendable {
    let configuration: ServerConfiguration
    let logger: Logger
    let database: Database
    /// The health data keys' own database, when it is not `database`.
    let keystore: Database?
    let masterKey: MasterKey
    let vault: HealthVault
    let audit: AuditLog
    let auditKey: AuditKey
    let httpClient: HTTPClient
    let outbox: Outbox
    let mailer: any Mailer
    /// The account e-mails' templates (a broken template fails start-up).
    let composer: AccountMailComposer
    /// Apple's token endpoint, for revoking a deleted account's Sign in with Apple grant (when Apple is configured).
    let appleTokenClient: (any AppleTokenClient)?
    let appleTokens: AppleTokenRevoker?
    let signer: SessionTokenSigner
    let hasher: PasswordHasher
    let profiles: ProfileStore
    /// Where every part reads the time and takes new ids.
    let clock: ServerClock
    let ids: IDSource
    /// This application's metrics registry (one per application: see ``ServerMetrics``).
    let metrics: ServerMetrics

    /// Opens the databases, checks the master key and builds the shared parts.
    static func open(
        configuration: ServerConfiguration, logger: Logger, mailer: (any Mailer)?, clock: ServerClock, ids: IDSource
    ) async throws -> ServerFoundation {
        // Everything that can fail on configuration comes first, before any resource that must be shut down.
        try createDataDirectory(configuration.dataDirectory)
        let masterKey = try MasterKey.load(for: configuration)
        if let warning = MasterKey.placementWarning(for: configuration) { logger.warning("\(warning)") }
        let appleCredentials = try AppleClientCredentials.load(configuration.identityProviders)
        if case .postgres = configuration.database, configuration.keystore == nil {
            logger.warning(
                "health data keys share the PostgreSQL database with the data: a backup of it can decrypt deleted accounts' samples; set FITBASE_KEYSTORE_URL to a database backed up apart"
            )
        }
        let database = try await Database.open(configuration.database, logger: logger)
        // Health data keys live apart from the data (a key store of their own unless configured to share the database).
        var keystore: Database?
        let keys: HealthKeyStore
        let auditKey: AuditKey
        let composer: AccountMailComposer
        do {
            if configuration.keystoreLocation != configuration.database {
                keystore = try await Database.open(configuration.keystoreLocation, logger: logger)
            }
            keys = HealthKeyStore(database: keystore ?? database, clock: clock)
            try await keys.prepare()
            // A wrong master key stops start-up here, naming the setting, instead of failing on each health request.
            try await HealthVault(keys: keys, masterKey: masterKey).checkMasterKey()
            // The key that signs the audit chains' digests: made on the first start, beside the data keys.
            guard let current = AuditKey.current(of: try await AuditKey.load(from: keys, masterKey: masterKey, creating: true)) else {
                throw HealthKeyStoreError.vanished
            }
            auditKey = current
            // Every instance on the database must hold the master key its secrets are sealed under (the first start
            // records it, after the check above has matched it against any stored health data keys).
            let masterKeyCheck = MasterKeyCheck(database: database)
            try await masterKeyCheck.prepare()
            try await masterKeyCheck.verify(masterKey, now: clock.now)
            composer = try await AccountMailComposer.load(appName: configuration.accounts.appName, publicURL: configuration.publicURL)
        } catch {
            try? await keystore?.shutdown()
            try? await database.shutdown()
            throw error
        }

        // From here on nothing throws: the pools and the client are handed to the caller.
        let vault = HealthVault(keys: keys, masterKey: masterKey)
        let httpClient = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(timeout: .init(connect: .seconds(10), read: .seconds(30)))
        )
        let outbox = Outbox(masterKey: masterKey, signal: WakeSignal())
        let appleTokenClient = appleCredentials.map {
            HTTPAppleTokenClient(
                client: httpClient, baseURL: configuration.identityProviders.appleAPIURL, credentials: $0, clock: clock
            ) as any AppleTokenClient
        }
        return ServerFoundation(
            configuration: configuration, logger: logger, database: database, keystore: keystore, masterKey: masterKey, vault: vault,
            audit: AuditLog(database: database, clock: clock), auditKey: auditKey, httpClient: httpClient, outbox: outbox,
            mailer: mailer ?? configuration.accounts.smtp.map { SMTPMailer(configuration: $0, clock: clock) as any Mailer } ?? LogMailer(logger: logger),
            composer: composer,
            appleTokenClient: appleTokenClient,
            appleTokens: appleTokenClient.map {
                AppleTokenRevoker(identities: IdentityStore(database: database), client: $0, masterKey: masterKey, outbox: outbox, logger: logger)
            },
            // The signing keys are the deployment's, in the database: read as the server starts, after migrations.
            signer: SessionTokenSigner(
                keys: SigningKeys(
                    store: SigningKeyStore(database: database), masterKey: masterKey,
                    legacyKeyFile: SigningKeys.legacyKeyFile(in: configuration.dataDirectory), logger: logger
                ),
                issuer: configuration.publicURL, clock: clock
            ),
            hasher: PasswordHasher(cost: configuration.bcryptCost, slots: configuration.accounts.passwordHashSlots),
            profiles: ProfileStore(database: database, vault: vault), clock: clock, ids: ids, metrics: ServerMetrics()
        )
    }

    /// The shared services, first in the application's list: the pools close last, after everything using them.
    var services: [any Service] {
        [
            DatabaseService(database: database), DatabaseService(database: keystore), CacheGenerationListener(database: database), HTTPClientService(client: httpClient), hasher,
            OutboxWorker(
                database: database, outbox: outbox, mailer: mailer, sender: configuration.accounts.sender, appleTokens: appleTokenClient,
                logger: logger, media: MediaFeature.storage(for: configuration, httpClient: httpClient), clock: clock
            ),
            PeriodicService.signingKeyRefresh(signer, logger: logger),
            AuditService(
                audit: audit, key: auditKey, logger: logger, clock: clock,
                checkpointInterval: configuration.audit.checkpointInterval,
                sink: configuration.audit.openCheckpointSink(client: httpClient, clock: clock)
            ),
        ]
    }

    /// Migrates the database and seals what earlier versions kept in clear; run before any feature starts.
    func start() async throws {
        try await MigrationRunner.forServer(database: database, logger: logger).run()
        try await CycleDataSealing(database: database, vault: vault).run(logger: logger)
        try await signer.load()
    }

    /// Closes the pools and the client when building the application fails after ``open(configuration:logger:mailer:clock:ids:)``.
    func close() async {
        try? await httpClient.shutdown()
        try? await keystore?.shutdown()
        try? await database.shutdown()
    }
}

/// Creates the data directory (owner-only) if it does not exist.
func createDataDirectory(_ path: String) throws(DataDirectoryError) {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
        guard isDirectory.boolValue else { throw DataDirectoryError(path: path, reason: "it is a file") }
        return
    }
    do {
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
        )
    } catch {
        throw DataDirectoryError(path: path, reason: "\(error.localizedDescription)")
    }
}

/// The data directory cannot be used; reported at start-up naming the setting.
public struct DataDirectoryError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String {
        "cannot use data directory \(path) (set by --data-dir / FITBASE_DATA_DIR): \(reason)"
    }
}

/// Shuts the outbound HTTP client (identity providers' keys, Apple's token endpoints) down with the server.
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}

/// Keeps the database pool open while the server runs and closes it after the server has drained.
struct DatabaseService: Service {
    /// `nil` for a database another service closes (the key store sharing the data's database).
    let database: Database?

    func run() async throws {
        try? await gracefulShutdown()
        try await database?.shutdown()
    }
}

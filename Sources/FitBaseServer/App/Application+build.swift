import AsyncHTTPClient
import FitBaseAPI
import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime
import ServiceLifecycle

/// The server application type `buildApplication` returns.
public typealias FitBaseApplication = Application<RouterResponder<FitBaseRequestContext>>

/// Assembles the whole server: data directory, database pool, migrations, routes and background services.
///
/// `fitbase serve` and the tests call this same function. Migrations run before the server accepts connections;
/// the database pool is a service that closes after the HTTP server has drained.
/// - Parameter onListening: called once with the URL the server listens on (useful with port 0).
public func buildApplication(
    configuration: ServerConfiguration,
    logger: Logger? = nil,
    onListening: @escaping @Sendable (String) async -> Void = { _ in }
) async throws -> FitBaseApplication {
    try await buildApplication(configuration: configuration, logger: logger, mailer: nil, onListening: onListening)
}

/// ``buildApplication(configuration:logger:onListening:)`` with the mailer and push provider chosen by the caller (tests
/// record e-mail and pushes), and, for tests comparing the two, without the ``DirectRoute``s.
func buildApplication(
    configuration: ServerConfiguration,
    logger: Logger? = nil,
    mailer: (any Mailer)?,
    pushProvider: (any PushProvider)? = nil,
    reminderClock: (@Sendable () -> Date)? = nil,
    directRoutes: Bool = true,
    onListening: @escaping @Sendable (String) async -> Void = { _ in }
) async throws -> FitBaseApplication {
    let logger = logger ?? {
        var logger = Logger(label: "fitbase")
        logger.logLevel = configuration.logLevel
        return logger
    }()

    // Everything that can fail on configuration comes first, before any resource that must be shut down.
    try createDataDirectory(configuration.dataDirectory)
    let openAPIDocument = try OpenAPIDocument.load()
    let providers = configuration.identityProviders
    let masterKey = try MasterKey.load(for: configuration)
    if let warning = MasterKey.placementWarning(for: configuration) { logger.warning("\(warning)") }
    let appleCredentials = try AppleClientCredentials.load(providers)
    let products = try ProductCatalog.load(path: configuration.billing.productsFile)
    let appStoreVerifier = try AppStoreSignedDataVerifier.load(configuration.billing)
    let stripeVerifier = configuration.billing.stripeWebhookSecrets.isEmpty
        ? nil : StripeSignatureVerifier(secrets: configuration.billing.stripeWebhookSecrets)
    let database = try await Database.open(configuration.database, logger: logger)
    // Health data keys live apart from the data (a key store of their own unless configured to share the database).
    var separateKeystore: Database?
    let keys: HealthKeyStore
    let auditKey: AuditKey
    if case .postgres = configuration.database, configuration.keystore == nil {
        logger.warning(
            "health data keys share the PostgreSQL database with the data: a backup of it can decrypt deleted accounts' samples; set FITBASE_KEYSTORE_URL to a database backed up apart"
        )
    }
    do {
        if configuration.keystoreLocation != configuration.database {
            separateKeystore = try await Database.open(configuration.keystoreLocation, logger: logger)
        }
        keys = HealthKeyStore(database: separateKeystore ?? database)
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
        try await masterKeyCheck.verify(masterKey)
    } catch {
        try? await separateKeystore?.shutdown()
        try? await database.shutdown()
        throw error
    }
    let vault = HealthVault(keys: keys, masterKey: masterKey)
    let audit = AuditLog(database: database)
    let healthRecords = HealthRecords(
        database: database, store: HealthSampleStore(database: database), vault: vault, audit: audit,
        consents: ConsentStore(database: database), sampleQuota: configuration.healthSampleQuota
    )

    let composer: AccountMailComposer
    do {
        composer = try await AccountMailComposer.load(appName: configuration.accounts.appName, publicURL: configuration.publicURL)
    } catch {
        try? await separateKeystore?.shutdown()
        try? await database.shutdown()
        throw error
    }

    // From here on nothing throws before the application's services own the pools and clients.
    // The signing keys are the deployment's, in the database: read as the server starts, after migrations.
    let signer = SessionTokenSigner(
        keys: SigningKeys(
            store: SigningKeyStore(database: database), masterKey: masterKey,
            legacyKeyFile: SigningKeys.legacyKeyFile(in: configuration.dataDirectory),
            logger: logger
        ),
        issuer: configuration.publicURL
    )
    let hasher = PasswordHasher(cost: configuration.bcryptCost, slots: configuration.accounts.passwordHashSlots)
    let httpClient = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: .init(timeout: .init(connect: .seconds(10), read: .seconds(30)))
    )
    let outbox = Outbox(masterKey: masterKey, signal: WakeSignal())
    let appleTokenClient = appleCredentials.map {
        HTTPAppleTokenClient(client: httpClient, baseURL: providers.appleAPIURL, credentials: $0) as any AppleTokenClient
    }
    let appleTokens = appleTokenClient.map {
        AppleTokenRevoker(identities: IdentityStore(database: database), client: $0, masterKey: masterKey, outbox: outbox, logger: logger)
    }
    let cycleStore = CycleStore(database: database, vault: vault)
    let historyStore = HistoryStore(database: database, vault: vault)
    let profiles = ProfileStore(database: database, vault: vault)
    // Every feature that stores a user's rows adds its owner here, so export and deletion cover it.
    let registry = AccountDataRegistry(owners: [
        AccountProfileOwner(profiles: profiles), IdentitiesOwner(appleTokens: appleTokens), SessionsOwner(), ConsentsOwner(), OutboxOwner(),
        CyclePeriodsOwner(store: cycleStore, audit: audit), WorkoutLogsOwner(store: historyStore, audit: audit),
        TrainingPlansOwner(), DailyRecommendationsOwner(vault: vault), GroupMembershipOwner(), NotificationsOwner(), SubscriptionsOwner(), DevicesOwner(),
        // Last registered, first deleted: health takes the user's audit chain head before leaving the group takes the events lock,
        // the order every health write takes them in.
        HealthSamplesOwner(records: healthRecords),
    ])
    let accounts = AccountsFeature(
        database: database, signer: signer, hasher: hasher, httpClient: httpClient, appleTokens: appleTokens,
        providers: providers, settings: configuration.accounts, rateLimits: configuration.rateLimits, profiles: profiles, composer: composer, outbox: outbox, registry: registry, logger: logger
    )
    let routes = RouteTable()
    let router = buildRouter(maxBodyBytes: configuration.maxBodyBytes, routes: routes)
    router.add(middleware: accounts.authentication)
    let hub = database.eventHub
    hub.limit(to: EventHub.Limits(perUser: configuration.social.maxStreamsPerUser, total: configuration.social.maxStreams))
    // Middleware of a few routes wraps only those (see RoutingTransport); the rate limits come first, so a refused
    // request runs nothing else.
    let rateLimits = configuration.rateLimits.isEnabled ? RateLimitMiddleware.scoped(RequestRateLimiter(configuration: configuration.rateLimits)) : []
    let scoped = rateLimits + [
        ScopedMiddleware(applies: AccountPageHeadersMiddleware.applies, middleware: AccountPageHeadersMiddleware()),
        ScopedMiddleware(
            applies: StripeWebhookMiddleware.applies,
            middleware: StripeWebhookMiddleware(verifier: stripeVerifier, maxBytes: configuration.maxBodyBytes)
        ),
        ScopedMiddleware(applies: ConditionalGetMiddleware.applies, middleware: ConditionalGetMiddleware()),
    ]
    let catalogStore = CatalogStore(database: database)
    let cycleReckoner = CycleReckoner(store: cycleStore, profiles: profiles)
    let entitlements = EntitlementService(store: SubscriptionStore(database: database), catalog: products)
    let premiumAccess = entitlements
    // Every synced collection, registered once: REST and sync push write through the same collection.
    let plans = PlansCollection(database: database, catalog: catalogStore, entitlements: entitlements)
    let workoutLogs = WorkoutLogsCollection(database: database, store: historyStore, catalog: catalogStore, profiles: profiles, cycle: cycleReckoner, audit: audit)
    let periods = PeriodsCollection(database: database, store: cycleStore, profiles: profiles, audit: audit)
    let collections = SyncedCollections([
        plans, workoutLogs, periods, HealthSamplesCollection(health: healthRecords), PreferencesCollection(profiles: profiles),
    ])
    let cycleController = CycleController(store: cycleStore, profiles: profiles, collection: periods)
    let historyController = HistoryController(history: historyStore, collection: workoutLogs, entitlements: entitlements)
    let planStore = PlanStore(database: database)
    let planController = PlanController(
        plans: planStore, collection: plans,
        progression: PlanProgressionService(
            plans: planStore, history: historyStore, catalog: catalogStore, profiles: profiles, cycle: cycleReckoner, entitlements: entitlements,
            audit: audit
        )
    )
    let groupController = GroupController(
        groups: GroupStore(database: database), membership: GroupMembership(database: database), configuration: configuration.social,
        publicURL: configuration.publicURL
    )
    let catalogResponses = CatalogResponses(store: catalogStore, premiumAccess: premiumAccess)
    let api = APIHandler(
        serviceStatus: ServiceStatusController(database: database, openAPIDocument: openAPIDocument),
        auth: accounts.auth, providers: accounts.providers, me: accounts.me, credentials: accounts.credentials, accountPages: accounts.pages,
        catalog: CatalogController(database: database, store: catalogStore, premiumAccess: premiumAccess),
        cycle: cycleController,
        history: historyController,
        plans: planController,
        recommendations: RecommendationController(
            store: RecommendationStore(database: database, vault: vault), catalog: catalogStore, history: historyStore, profiles: profiles,
            cycle: cycleReckoner, premiumAccess: premiumAccess,
            model: configuration.languageModel.map { AnthropicMessagesModel(client: httpClient, configuration: $0) },
            modelCallsPerDay: (configuration.languageModel?.dailyCallsFree ?? 0, configuration.languageModel?.dailyCallsPremium ?? 0),
            modelBudgetPerDay: configuration.languageModel?.dailyBudget ?? 0,
            logger: logger
        ),
        sync: SyncController(database: database, collections: collections),
        billing: BillingController(
            entitlements: entitlements,
            appStore: appStoreVerifier.map { AppStoreSubscriptions(verifier: $0, catalog: products, database: database, logger: logger) },
            stripe: StripeSubscriptions(catalog: products, database: database, logger: logger),
            database: database
        ),
        health: HealthController(records: healthRecords, profiles: profiles),
        groups: groupController,
        challenges: ChallengeController(database: database, groups: groupController, notifications: NotificationStore(database: database)),
        events: EventStreamController(database: database, hub: hub),
        devices: DeviceController(store: DeviceStore(database: database))
    )
    try api.registerHandlers(
        on: RoutingTransport(router: router, routes: routes, scoped: scoped, direct: directRoutes ? ServiceStatusController.routes + catalogResponses.routes + api.sync.routes + api.health.routes + api.events.routes + api.me.routes : []),
        configuration: .init(dateTranscoder: InternetDateTimeTranscoder(), jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes])
    )

    let apns = pushProvider == nil ? configuration.apns.map { APNsProvider(configuration: $0, logger: logger) } : nil
    let host = configuration.host
    var app = Application(
        router: router,
        server: .http1(configuration: .init(idleTimeout: .milliseconds(Int64(configuration.httpIdleTimeout / .milliseconds(1))))),
        configuration: .init(address: .hostname(host, port: configuration.port), serverName: "FitBase"),
        services: [
            DatabaseService(database: database), hasher, HTTPClientService(client: httpClient),
            DatabaseService(database: separateKeystore),
            SyncRetentionService(
                database: database, registry: registry,
                unverifiedAccounts: configuration.accounts.unverifiedAccountDays.map {
                    UnverifiedAccountSweeper(database: database, registry: registry, lifetime: TimeInterval($0) * 86_400, logger: logger)
                },
                logger: logger, firstRun: configuration.housekeeping.first, interval: configuration.housekeeping.interval
            ),
            WeekRolloverService(rollover: WeekRollover(database: database), logger: logger),
            OutboxWorker(
                database: database, outbox: outbox,
                mailer: mailer ?? configuration.accounts.smtp.map { SMTPMailer(configuration: $0) as any Mailer } ?? LogMailer(logger: logger),
                sender: configuration.accounts.sender, appleTokens: appleTokenClient, logger: logger
            ),
            // Pushes go out through Apple's provider API once it is configured; until then they are logged. The
            // provider's connections close after the worker has stopped (services stop in reverse order).
            APNsProviderService(provider: apns),
            PushWorker(database: database, provider: pushProvider ?? apns ?? LogPushProvider(logger: logger), logger: logger),
            ReminderService(
                scheduler: ReminderScheduler(database: database, cycle: cycleReckoner, claimKey: masterKey.derivedKey(for: "push reminder claims")), logger: logger, now: reminderClock ?? { .storageNow }
            ),
            SigningKeyRefresh(signer: signer, logger: logger),
            EventListenerService(database: database, hub: hub, logger: logger, sessionCheck: configuration.streamSessionCheck),
            AuditService(audit: audit, key: auditKey, logger: logger),
        ],
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            let shownHost = host.contains(":") ? "[\(host)]" : host
            await onListening("http://\(shownHost):\(port)")
        },
        logger: logger
    )
    app.beforeServerStarts {
        try await MigrationRunner.forServer(database: database, logger: logger).run()
        try await CycleDataSealing(database: database, vault: vault).run(logger: logger)
        // The hub hands out events committed from now on; streams catch up on what came before themselves.
        hub.start(after: try await database.withConnection { db in try await EventLog.latestID(on: db) })
        try await signer.load()
        if configuration.loadsDemoCatalog { try await DemoCatalog.loadIfEmpty(into: database, logger: logger) }
    }
    return app
}

/// A router with the middleware every route shares, outermost first: request id, request log, errors as problems,
/// body limit. Routes added to it afterwards get all four.
func buildRouter(maxBodyBytes: Int, routes: RouteTable) -> Router<FitBaseRequestContext> {
    let router = Router(context: FitBaseRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: RequestLogMiddleware())
    router.add(middleware: ProblemMiddleware(routes: routes))
    router.add(middleware: BodyLimitMiddleware(maxBytes: maxBodyBytes))
    return router
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

/// Closes the APNs provider's connections when the server stops (nothing to do without one).
struct APNsProviderService: Service {
    let provider: APNsProvider?

    func run() async throws {
        try? await gracefulShutdown()
        try await provider?.shutdown()
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

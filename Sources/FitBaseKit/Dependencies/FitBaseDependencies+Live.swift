import FitBaseClient
import FitBaseCore
import Foundation
import OpenAPIRuntime

extension FitBaseDependencies {
    /// What the live services need from the app.
    public struct LiveConfiguration: Sendable {
        /// The FitBase server.
        public var serverURL: URL
        /// Where the SDK keeps its files: the local store (`fitbase.sqlite`) and the cached entitlement. Use Application
        /// Support, excluded from backups.
        public var dataDirectory: URL
        /// Where the session's tokens live: `KeychainTokenStore()` on iOS.
        public var tokenStore: any TokenStore
        /// Where the local store's key lives: `KeychainKeyProvider()` on iOS; by default a 0600 file beside the store
        /// elsewhere (and the Keychain on Apple platforms).
        public var keyProvider: (any KeyProvider)?
        /// The store to buy subscriptions from (a StoreKit 2 adapter); `nil` turns purchases off.
        public var purchaseProvider: (any PurchaseProvider)?
        /// Where health samples are read for upload (`HealthKitAnchoredSource()` on iOS); `nil` uploads none.
        public var healthKit: (any HealthKitSource)?
        /// The products the paywall sells, with their tiers (prices come from the store).
        public var products: [SubscriptionProduct]
        /// The app's URL scheme and the server's public URLs, for deep links (the server's `FITBASE_APP_SCHEME` and
        /// `FITBASE_PUBLIC_URL`); the server's own URL is always included.
        public var appScheme: String
        public var publicURLs: [URL]
        /// Where analytics events go (a ``BatchingAnalyticsSink`` over the app's back end; the console by default) — only
        /// while the user grants the `analytics` consent (``ConsentGatedAnalytics``).
        public var analytics: any AnalyticsService
        /// Tells syncing when the network is back (`NetworkPathReachability()` on Apple platforms).
        public var reachability: (any ReachabilityMonitor)?
        /// How long cached answers are served without asking the server.
        public var catalogTTL: Duration
        public var recommendationsTTL: Duration
        public var entitlementTTL: Duration
        /// The user's time zone (the device's, read at each use, by default).
        public var timeZone: @Sendable () -> TimeZone
        /// The HTTP transport (the platform's by default; tests pass one that can go offline).
        public var transport: (any ClientTransport)?
        public var clock: any KitClock
        /// The app's bundle id, which the server sends its pushes to (`apns-topic`).
        public var bundleID: String?
        /// What remote config's conditions read: the app's version (`CFBundleShortVersionString` by default), its
        /// platform (this build's) and locale (the device's).
        public var appVersion: String?
        public var platform: ConfigPlatform?
        public var locale: String?
        /// Where errors, crashes and timings go; `nil`: the FitBase server (``FitBaseReporter``).
        public var reports: (any ReportingService)?

        /// A configuration with the defaults: catalog cached 6 hours, recommendations 1 hour, the entitlement 1 hour.
        public init(
            serverURL: URL, dataDirectory: URL, tokenStore: any TokenStore = InMemoryTokenStore(), keyProvider: (any KeyProvider)? = nil,
            purchaseProvider: (any PurchaseProvider)? = nil, products: [SubscriptionProduct] = [], appScheme: String = "fitbase", publicURLs: [URL] = [],
            analytics: any AnalyticsService = ConsoleAnalyticsSink(), reachability: (any ReachabilityMonitor)? = nil, catalogTTL: Duration = .seconds(6 * 3_600),
            recommendationsTTL: Duration = .seconds(3_600), entitlementTTL: Duration = .seconds(3_600),
            timeZone: @escaping @Sendable () -> TimeZone = { TimeZone.current }, transport: (any ClientTransport)? = nil, clock: any KitClock = SystemKitClock(),
            healthKit: (any HealthKitSource)? = nil, bundleID: String? = Bundle.main.bundleIdentifier,
            appVersion: String? = Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String,
            platform: ConfigPlatform? = BuildPlatform.current, locale: String? = Locale.current.identifier, reports: (any ReportingService)? = nil
        ) {
            self.serverURL = serverURL
            self.dataDirectory = dataDirectory
            self.tokenStore = tokenStore
            self.keyProvider = keyProvider
            self.purchaseProvider = purchaseProvider
            self.products = products
            self.appScheme = appScheme
            self.publicURLs = publicURLs
            self.analytics = analytics
            self.reachability = reachability
            self.catalogTTL = catalogTTL
            self.recommendationsTTL = recommendationsTTL
            self.entitlementTTL = entitlementTTL
            self.timeZone = timeZone
            self.transport = transport
            self.clock = clock
            self.healthKit = healthKit
            self.bundleID = bundleID
            self.appVersion = appVersion
            self.platform = platform
            self.locale = locale
            self.reports = reports
        }
    }

    /// The live services over one ``FitBaseClient``, one sealed ``LocalStore`` and one ``SyncEngine`` (started here:
    /// it syncs periodically, after local changes, on the server's `sync` events and when the network comes back), with
    /// the push token and a pending screen kept beside the store (`push-registration.json`, `pending-navigation.json`).
    /// The entitlement is read from its cache at once and revalidated here and at each sign-in, and on the server's
    /// `subscription` events; the purchase provider's transactions go to the server as they arrive. Images are cached in
    /// `images/` beside the store (16 MiB in memory, 128 MiB on disk) and forgotten at sign-out. Build it once, at
    /// launch.
    public static func live(_ configuration: LiveConfiguration) throws -> FitBaseDependencies {
        let client = FitBaseClient(serverURL: configuration.serverURL, tokenStore: configuration.tokenStore, transport: configuration.transport)
        let store = try LocalStore(
            path: configuration.dataDirectory.appendingPathComponent("fitbase.sqlite").path, keyProvider: configuration.keyProvider)
        let engine = SyncEngine(client: client, store: store)
        let entitlementFile = configuration.dataDirectory.appendingPathComponent("entitlement.json")
        let entitlements = Entitlements(client: client, cacheFile: entitlementFile)
        let localData = LocalData(store: store, entitlementCache: entitlementFile)
        let clock = configuration.clock
        let cache = ResponseCache(client: client, store: store, clock: clock)
        let api = ServerAPI(client: client)
        let images = ImageCache(directory: configuration.dataDirectory.appendingPathComponent("images", isDirectory: true))
        let analytics = ConsentGatedAnalytics(configuration.analytics)
        let reports = configuration.reports ?? FitBaseReporter(client: client, app: .current(appVersion: configuration.appVersion))
        Task { await reportSyncRounds(of: engine, to: reports) }
        let parser = DeepLinkParser(appScheme: configuration.appScheme, publicURLs: [configuration.serverURL] + configuration.publicURLs)
        let catalog = LiveCatalogService(api: api, cache: cache, ttl: configuration.catalogTTL)
        let billing = LiveBillingService(
            client: client, entitlements: entitlements, store: configuration.purchaseProvider, products: configuration.products, cache: cache,
            ttl: configuration.entitlementTTL, clock: clock)
        let sync = SyncRunner(engine: engine, client: client, billing: billing, reachability: configuration.reachability)
        let push = LivePushService(
            client: client, bundleID: configuration.bundleID, timeZone: configuration.timeZone,
            file: configuration.dataDirectory.appendingPathComponent("push-registration.json"))
        let profile = LiveProfileService(client: client, sync: sync, localData: localData, analyticsConsent: analytics, push: push)
        Task { if await client.currentUserID() != nil { await sync.restart() } }
        Task { await followAnalyticsConsent(of: client, profile: profile, gate: analytics) }
        // Other people's photos must not outlive the session that was allowed to see them.
        Task {
            for await state in await client.sessionStates() {
                if case .signedOut = state { await images.removeAll() }
            }
        }
        if let store = configuration.purchaseProvider {
            // From launch on, whoever is signed in: what the store delivers goes to the server (a transaction that
            // arrives signed out stays unfinished until the next sign-in's refresh).
            Task {
                for await transaction in await store.transactionUpdates() { try? await billing.deliver(transaction) }
            }
        }
        return FitBaseDependencies(
            auth: LiveAuthService(client: client, sync: sync, localData: localData, analyticsConsent: analytics, push: push),
            profile: profile,
            cycle: LiveCycleService(engine: engine, profile: ProfileAverages(cache: cache), clock: clock, timeZone: configuration.timeZone),
            catalog: catalog,
            recommendations: LiveRecommendationService(
                api: api, cache: cache, ttl: configuration.recommendationsTTL, clock: clock, timeZone: configuration.timeZone),
            history: LiveHistoryService(
                engine: engine, catalog: catalog, clock: clock, timeZone: configuration.timeZone,
                syncTracker: WorkoutSyncTracker(engine: engine, analytics: analytics)),
            plans: LivePlanService(engine: engine, client: client),
            billing: billing,
            groups: LiveGroupService(client: client, api: api, parser: parser, reporter: reports),
            notifications: LiveNotificationService(api: api, sync: sync),
            health: LiveHealthService(
                api: api, uploader: configuration.healthKit.map { HealthSampleUploader(client: client, store: store, source: $0) }, reporter: reports),
            analytics: analytics, clock: clock, deepLinks: parser, push: push,
            pendingNavigation: PendingNavigationStore(file: configuration.dataDirectory.appendingPathComponent("pending-navigation.json")),
            media: LiveMediaService(client: client, cache: images),
            remoteConfig: LiveRemoteConfigService(
                client: client, cache: cache, appVersion: configuration.appVersion, platform: configuration.platform, locale: configuration.locale),
            reports: reports
        )
    }

    /// Times each sync round the engine runs (`sync.round`: from `syncing` to the next `idle`) and reports a round the
    /// server refused or failed as an error at `sync.round`.
    private static func reportSyncRounds(of engine: SyncEngine, to reports: any ReportingService) async {
        var started: ContinuousClock.Instant?
        for await status in await engine.statusUpdates() {
            switch status.state {
            case .syncing:
                if started == nil { started = .now }
            case .idle:
                if let start = started { reports.trace("sync.round", milliseconds: ReportedTime.milliseconds(since: start)) }
                started = nil
            case .offline:
                started = nil
            case .error:
                if started != nil { reports.error(.server, at: "sync.round") }
                started = nil
            }
        }
    }

    /// Keeps `gate` on the signed-in user's `analytics` answer: at launch and whenever a user signs in, their consents
    /// are read (until then the answer is not known). A sign-out keeps the last user's answer for its own event.
    private static func followAnalyticsConsent(of client: FitBaseClient, profile: LiveProfileService, gate: ConsentGatedAnalytics) async {
        for await state in await client.sessionStates() {
            guard case .signedIn(let id) = state else { continue }
            // A sign-in through the auth service has begun this user already; a launch with a session has not.
            if gate.begin(user: id) || gate.consent == .unknown { _ = try? await profile.consents() }
        }
    }
}

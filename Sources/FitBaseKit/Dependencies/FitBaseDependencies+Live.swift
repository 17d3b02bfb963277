import FitBaseClient
import FitBaseCore
import Foundation
import OpenAPIRuntime

extension FitBaseDependencies {
    /// What the live services need from the app: the server's URL, and for deep links the app's scheme and public URLs.
    /// Everything else has a default that works: the device's own services on Apple platforms
    /// (`LiveConfiguration+PlatformDefaults.swift`), analytics uploaded to the server after the `analytics` consent,
    /// the paywall's products from the server.
    public struct LiveConfiguration: Sendable {
        /// The FitBase server.
        public var serverURL: URL
        /// Where the SDK keeps its files: the local store (`fitbase.sqlite`), the cached entitlement, the analytics
        /// queue. By default ``defaultDataDirectory()``; the live container creates it and excludes it from backups.
        public var dataDirectory: URL
        /// Where the session's tokens live (by default ``platformTokenStore()``: the Keychain on Apple platforms).
        public var tokenStore: any TokenStore
        /// Where the local store's key lives: `KeychainKeyProvider()` on Apple platforms, a 0600 file beside the store
        /// elsewhere, by default.
        public var keyProvider: (any KeyProvider)?
        /// The store to buy subscriptions from (by default ``platformPurchaseProvider()``: StoreKit 2 on Apple
        /// platforms); `nil` turns purchases off. Which products it sells is the server's products file.
        public var purchaseProvider: (any PurchaseProvider)?
        /// Where health samples are read for upload (by default ``platformHealthKit()``: HealthKit where the device
        /// has it); `nil` uploads none.
        public var healthKit: (any HealthKitSource)?
        /// The app's URL scheme and the server's public URLs, for deep links (the server's `FITBASE_APP_SCHEME` and
        /// `FITBASE_PUBLIC_URL`); the server's own URL is always included.
        public var appScheme: String
        public var publicURLs: [URL]
        /// Where analytics events go, only while the user grants the `analytics` consent (``ConsentGatedAnalytics``);
        /// `nil`: the FitBase server (a ``BatchingAnalyticsSink`` over ``FitBaseAnalyticsUploader``, its queue kept in
        /// `analytics-queue.json`).
        public var analytics: (any AnalyticsService)?
        /// Tells syncing when the network is back (by default ``platformReachability()``: `NWPathMonitor` on Apple
        /// platforms).
        public var reachability: (any ReachabilityMonitor)?
        /// The system's notification prompt and remote registration (by default
        /// ``platformNotificationPermission()``: `UNUserNotificationCenter` on Apple platforms).
        public var notificationPermission: (any NotificationPermissionProvider)?
        /// Sign in with Apple's sheet and credential-state check (by default ``platformAppleSignIn()``:
        /// `ASAuthorizationController` on Apple platforms).
        public var appleSignIn: (any AppleSignInProvider)?
        /// Google's sign-in, filled in by the app with Google's SDK; `nil`: no Google sign-in.
        public var googleSignIn: (any GoogleSignInProvider)?
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

        /// A configuration with the defaults: the platform's services, catalog cached 6 hours, recommendations 1 hour,
        /// the entitlement 1 hour.
        public init(
            serverURL: URL, dataDirectory: URL = defaultDataDirectory(), tokenStore: any TokenStore = platformTokenStore(),
            keyProvider: (any KeyProvider)? = nil, purchaseProvider: (any PurchaseProvider)? = platformPurchaseProvider(),
            appScheme: String = "fitbase", publicURLs: [URL] = [], analytics: (any AnalyticsService)? = nil,
            reachability: (any ReachabilityMonitor)? = platformReachability(),
            notificationPermission: (any NotificationPermissionProvider)? = platformNotificationPermission(),
            appleSignIn: (any AppleSignInProvider)? = platformAppleSignIn(), googleSignIn: (any GoogleSignInProvider)? = nil,
            catalogTTL: Duration = .seconds(6 * 3_600), recommendationsTTL: Duration = .seconds(3_600),
            entitlementTTL: Duration = .seconds(3_600), timeZone: @escaping @Sendable () -> TimeZone = { TimeZone.current },
            transport: (any ClientTransport)? = nil, clock: any KitClock = SystemKitClock(),
            healthKit: (any HealthKitSource)? = platformHealthKit(), bundleID: String? = Bundle.main.bundleIdentifier,
            appVersion: String? = Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String,
            platform: ConfigPlatform? = BuildPlatform.current, locale: String? = Locale.current.identifier,
            reports: (any ReportingService)? = nil
        ) {
            self.serverURL = serverURL
            self.dataDirectory = dataDirectory
            self.tokenStore = tokenStore
            self.keyProvider = keyProvider
            self.purchaseProvider = purchaseProvider
            self.appScheme = appScheme
            self.publicURLs = publicURLs
            self.analytics = analytics
            self.reachability = reachability
            self.notificationPermission = notificationPermission
            self.appleSignIn = appleSignIn
            self.googleSignIn = googleSignIn
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

        /// The app's own directory under the user's Application Support (`~/.local/share` on Linux), named by the
        /// bundle id (`FitBase` without one).
        public static func defaultDataDirectory() -> URL {
            let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            return support.appendingPathComponent(Bundle.main.bundleIdentifier ?? "FitBase", isDirectory: true)
        }
    }

    /// The live services over one ``FitBaseClient``, one sealed ``LocalStore`` and one ``SyncEngine`` (started here:
    /// it syncs periodically, after local changes, on the server's `sync` events and when the network comes back), with
    /// the push token, a pending screen and the analytics queue kept beside the store in the data directory
    /// (`push-registration.json`, `pending-navigation.json`, `analytics-queue.json`).
    /// The entitlement is read from its cache at once and revalidated here and at each sign-in, and on the server's
    /// `subscription` events; the purchase provider's transactions go to the server as they arrive. Images are cached in
    /// `images/` beside the store (16 MiB in memory, 128 MiB on disk) and forgotten at sign-out. Build it once, at
    /// launch.
    public static func live(_ configuration: LiveConfiguration) throws -> FitBaseDependencies {
        let client = FitBaseClient(serverURL: configuration.serverURL, tokenStore: configuration.tokenStore, transport: configuration.transport)
        var directory = configuration.dataDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The store is sealed with a key that never leaves the device: a backup of it could not be read anyway.
        var notBackedUp = URLResourceValues()
        notBackedUp.isExcludedFromBackup = true
        try? directory.setResourceValues(notBackedUp)
        let store = try LocalStore(path: directory.appendingPathComponent("fitbase.sqlite").path, keyProvider: configuration.keyProvider)
        let engine = SyncEngine(client: client, store: store)
        let entitlementFile = directory.appendingPathComponent("entitlement.json")
        let entitlements = Entitlements(client: client, cacheFile: entitlementFile)
        let localData = LocalData(store: store, entitlementCache: entitlementFile)
        let clock = configuration.clock
        let cache = ResponseCache(client: client, store: store, clock: clock)
        let images = ImageCache(directory: directory.appendingPathComponent("images", isDirectory: true))
        let analytics = ConsentGatedAnalytics(
            configuration.analytics
                ?? BatchingAnalyticsSink(
                    uploader: FitBaseAnalyticsUploader(client: client), queueFile: directory.appendingPathComponent("analytics-queue.json"),
                    clock: clock))
        let reports = configuration.reports ?? FitBaseReporter(client: client, app: .current(appVersion: configuration.appVersion))
        Task { await reportSyncRounds(of: engine, to: reports) }
        let parser = DeepLinkParser(appScheme: configuration.appScheme, publicURLs: [configuration.serverURL] + configuration.publicURLs)
        let catalog = LiveCatalogService(client: client, cache: cache, ttl: configuration.catalogTTL)
        let billing = LiveBillingService(
            client: client, entitlements: entitlements, store: configuration.purchaseProvider, cache: cache,
            ttl: configuration.entitlementTTL, clock: clock)
        let sync = SyncRunner(engine: engine, client: client, billing: billing, reachability: configuration.reachability)
        let push = LivePushService(
            client: client, bundleID: configuration.bundleID, timeZone: configuration.timeZone,
            file: directory.appendingPathComponent("push-registration.json"), notificationPermission: configuration.notificationPermission)
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
        let recommendationInputs = RecommendationInputs(engine: engine, clock: clock)
        return FitBaseDependencies(
            auth: LiveAuthService(
                client: client, sync: sync, localData: localData, analyticsConsent: analytics, push: push,
                appleSignIn: configuration.appleSignIn, googleSignIn: configuration.googleSignIn),
            profile: profile,
            cycle: LiveCycleService(
                engine: engine, profile: CycleProfile(cache: cache), recommendations: recommendationInputs, clock: clock,
                timeZone: configuration.timeZone),
            catalog: catalog,
            recommendations: LiveRecommendationService(
                cache: cache, inputs: recommendationInputs, ttl: configuration.recommendationsTTL, clock: clock, timeZone: configuration.timeZone),
            history: LiveHistoryService(
                engine: engine, catalog: catalog, billing: billing, recommendations: recommendationInputs, clock: clock,
                timeZone: configuration.timeZone, syncTracker: WorkoutSyncTracker(engine: engine, analytics: analytics)),
            plans: LivePlanService(engine: engine, client: client),
            billing: billing,
            groups: LiveGroupService(client: client, parser: parser, reporter: reports),
            notifications: LiveNotificationService(client: client, sync: sync),
            health: LiveHealthService(
                client: client, uploader: configuration.healthKit.map { HealthSampleUploader(client: client, store: store, source: $0) }, reporter: reports),
            analytics: analytics, clock: clock, deepLinks: parser, push: push,
            pendingNavigation: PendingNavigationStore(file: directory.appendingPathComponent("pending-navigation.json")),
            media: LiveMediaService(client: client, cache: images),
            remoteConfig: LiveRemoteConfigService(
                client: client, cache: cache, appVersion: configuration.appVersion, platform: configuration.platform, locale: configuration.locale),
            reports: reports, healthKit: configuration.healthKit
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

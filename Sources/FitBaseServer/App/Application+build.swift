import AsyncHTTPClient
import FitBaseAPI
import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime
import ServiceLifecycle
import Tracing

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
/// record e-mail and pushes), the clock and id source (tests move time and predict ids), and, for tests comparing the
/// two, without the ``DirectRoute``s. `opened` is handed the foundation once it is open, so a test can read and write
/// the application's own database.
func buildApplication(
    configuration: ServerConfiguration,
    logger: Logger? = nil,
    mailer: (any Mailer)?,
    pushProvider: (any PushProvider)? = nil,
    directRoutes: Bool = true,
    clock: ServerClock = .system,
    ids: IDSource = .random,
    opened: (ServerFoundation) -> Void = { _ in },
    onMetricsListening: @escaping @Sendable (String) async -> Void = { _ in },
    onListening: @escaping @Sendable (String) async -> Void = { _ in }
) async throws -> FitBaseApplication {
    let logger = logger ?? {
        var logger = Logger(label: "fitbase")
        logger.logLevel = configuration.logLevel
        return logger
    }()
    // Made before anything opens: a collector's settings that do not work stop the start with nothing to close.
    let tracing = try RequestTracing.make(configuration.tracing, logLevel: configuration.logLevel)
    let foundation = try await ServerFoundation.open(configuration: configuration, logger: logger, mailer: mailer, clock: clock, ids: ids)
    opened(foundation)
    let routes = RouteTable()
    let router = buildRouter(
        maxBodyBytes: configuration.maxBodyBytes, bodyLimitExceptions: MediaFeature.bodyLimits(configuration.media) + ConsoleFeature.bodyLimits,
        routes: routes, tracer: tracing?.tracer
    )
    let operations: ServerOperations
    let features: [any ServerFeature]
    var ahead: AheadRoutes?
    let serverName = "FitBase"
    do {
        operations = try composeFeatures(foundation, pushProvider: pushProvider, onMetricsListening: onMetricsListening)
        router.add(middleware: operations.accountsFeature.authentication)
        // Middleware of a few routes wraps only those (see RoutingTransport); the rate limits come first, so a refused
        // request runs nothing else.
        let limiter = configuration.rateLimits.isEnabled ? RequestRateLimiter(configuration: configuration.rateLimits) : nil
        let scoped = (limiter.map(RateLimitMiddleware.scoped) ?? []) + operations.features.flatMap(\.middleware)
            + [ScopedMiddleware(applies: ConditionalGetMiddleware.applies, middleware: ConditionalGetMiddleware())]
        let metrics = foundation.configuration.metrics.isEnabled
            ? (recorder: foundation.metrics, names: OperationNames(document: operations.statusFeature.openAPIDocument)) : nil
        try operations.registerHandlers(
            on: RoutingTransport(
                router: router, routes: routes, scoped: scoped, direct: directRoutes ? operations.directRoutes : [], metrics: metrics
            ),
            configuration: .init(dateTranscoder: InternetDateTimeTranscoder(), jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes])
        )
        features = try await routedFeatures(foundation, operations: operations)
        for feature in features { feature.addRoutes(to: router) }
        // Media links to the data directory and the catalog answered on the event loop, ahead of the router
        // (not when the direct routes are off for a comparison, nor when requests are traced: that is the router's
        // middleware).
        if directRoutes, tracing == nil {
            let recorder = { (path: String) in metrics.map { $0.recorder.route(operation: $0.names.name(.get, path), method: "GET") } }
            let mediaRecorder = recorder("/v1/media/{token}")
            let counts = foundation.metrics
            let media = operations.mediaLinkRoute(metrics: mediaRecorder, counts: counts)
            ahead = AheadRoutes(
                fields: operations.aheadAnswerFields(limiter: limiter, logger: logger, serverName: serverName),
                media: media,
                catalog: operations.catalogAheadRoute(
                    workoutMetrics: recorder("/v1/workouts/{workoutId}"), pageMetrics: recorder("/v1/workouts"),
                    counts: counts
                )
            )
        }
    } catch {
        // Nothing owns the pools and the client yet: close them here.
        await foundation.close()
        throw error
    }

    let host = configuration.host
    let aheadRoutes = ahead
    var app = Application(
        router: router,
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: FileRegionResponses.channelHandlers(ahead: aheadRoutes),
                idleTimeout: .milliseconds(Int64(configuration.httpIdleTimeout / .milliseconds(1)))
            )
        ),
        configuration: .init(address: .hostname(host, port: configuration.port), serverName: serverName),
        services: foundation.services + features.flatMap(\.services) + (tracing.map { [$0.service] } ?? []),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            let shownHost = host.contains(":") ? "[\(host)]" : host
            await onListening("http://\(shownHost):\(port)")
        },
        logger: logger
    )
    app.beforeServerStarts {
        try await foundation.start()
        for feature in features { try await feature.start() }
    }
    return app
}

/// Every feature whose routes the router gets: the operations' and those outside the contract (the operator's
/// console).
func routedFeatures(_ foundation: ServerFoundation, operations: ServerOperations) async throws -> [any ServerFeature] {
    let console = try await ConsoleFeature.make(foundation, operations: operations, analytics: operations.analyticsFeature.store)
    return operations.features + [console]
}

/// Builds every feature, each after those it depends on, and the operations answering the API from them. Only the
/// first two can fail (the contract document, the products file and Apple's certificates): they come before any
/// feature that opens a connection of its own (the APNs provider).
func composeFeatures(
    _ foundation: ServerFoundation, pushProvider: (any PushProvider)?, onMetricsListening: @escaping @Sendable (String) async -> Void
) throws -> ServerOperations {
    let status = try ServiceStatusFeature(foundation)
    let billing = try BillingFeature(foundation)
    let catalog = CatalogFeature(foundation, billing: billing)
    let cycle = CycleFeature(foundation)
    let history = HistoryFeature(foundation, catalog: catalog, cycle: cycle, billing: billing)
    let plans = PlansFeature(foundation, catalog: catalog, cycle: cycle, history: history, billing: billing)
    let recommendations = RecommendationsFeature(foundation, catalog: catalog, cycle: cycle, history: history, billing: billing)
    let health = HealthFeature(foundation, cycle: cycle)
    let social = SocialFeature(foundation)
    let push = PushFeature(foundation, cycle: cycle, provider: pushProvider)
    let media = MediaFeature(foundation, catalog: catalog, billing: billing)
    let analytics = AnalyticsFeature(foundation)
    // Export and deletion cover every feature's rows. Deletion runs from the last owner to the first: health takes the
    // user's audit chain head before leaving the group takes the events lock, the order every health write takes them in.
    let registry = AccountDataRegistry(
        owners: AccountsFeature.dataOwners(foundation) + ([cycle, history, plans, recommendations, social, billing, push, health, media, analytics] as [any ServerFeature]).flatMap(\.dataOwners)
    )
    let accounts = AccountsFeature(foundation, registry: registry)
    let sync = SyncFeature(
        foundation, collections: ([accounts, plans, history, cycle, health] as [any ServerFeature]).flatMap(\.syncedCollections),
        registry: registry
    )
    return ServerOperations(
        status: status, accounts: accounts, catalog: catalog, cycle: cycle, history: history, plans: plans, recommendations: recommendations,
        sync: sync, billing: billing, health: health, social: social, realtime: RealtimeFeature(foundation), push: push,
        media: media, metrics: MetricsFeature(foundation, onListening: onMetricsListening), analytics: analytics,
        remoteConfig: RemoteConfigFeature(foundation, billing: billing), reports: ReportsFeature(foundation), clock: foundation.clock, ids: foundation.ids
    )
}

/// A router with the middleware every route shares, outermost first: request id, request log, errors as problems,
/// body limit. Routes added to it afterwards get them all.
func buildRouter(
    maxBodyBytes: Int, bodyLimitExceptions: [BodyLimitMiddleware.Exception] = [], routes: RouteTable, tracer: (any Tracer)? = nil
) -> Router<FitBaseRequestContext> {
    let router = Router(context: FitBaseRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: RequestIDMiddleware())
    // Traced, when traces are on, with the request's id and the status its problem (if any) was answered with.
    if let tracer { router.add(middleware: RequestTracingMiddleware(tracer: tracer)) }
    router.add(middleware: RequestLogMiddleware())
    router.add(middleware: ProblemMiddleware(routes: routes))
    router.add(middleware: BodyLimitMiddleware(maxBytes: maxBodyBytes, exceptions: bodyLimitExceptions))
    return router
}

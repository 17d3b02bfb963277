import Crypto
import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SQLKit
import ServiceLifecycle
import Synchronization

/// `GET /metrics`: this instance's counters and levels in Prometheus' text format (see ``ServerMetrics``).
///
/// Off unless `FITBASE_METRICS_TOKEN` is set — then the API's port serves it to a caller presenting that bearer token
/// (anyone else gets 401) — or `--metrics-port` is: a server of its own on that port serves it (asking for the token
/// too when one is set). Levels (pool use, open streams, the outbox) are read when a scrape asks for them.
struct MetricsFeature: ServerFeature {
    let metrics: ServerMetrics
    let configuration: MetricsConfiguration
    private let levels: MetricsLevels
    private let host: String
    private let logger: Logger
    /// Called with the metrics server's URL once it listens.
    private let onListening: @Sendable (String) async -> Void

    /// - Parameter onListening: called with the metrics server's URL once it listens (it is logged either way).
    init(_ foundation: ServerFoundation, onListening: @escaping @Sendable (String) async -> Void = { _ in }) {
        metrics = foundation.metrics
        configuration = foundation.configuration.metrics
        levels = MetricsLevels(database: foundation.database, metrics: foundation.metrics)
        host = foundation.configuration.host
        let logger = foundation.logger
        self.logger = logger
        self.onListening = { url in
            logger.notice("metrics listening", metadata: ["url": "\(url)"])
            await onListening(url)
        }
    }

    /// The exposition after reading the levels.
    func scrape() async throws -> [UInt8] {
        try await levels.read()
        return metrics.exposition()
    }

    /// `/metrics` on the API's port: 404 without a token configured, 401 without the right one.
    var middleware: [ScopedMiddleware] {
        [ScopedMiddleware(applies: { path, _ in path == "/metrics" }, middleware: MetricsAccessMiddleware(token: configuration.token, servedWithoutToken: false))]
    }

    var services: [any Service] {
        guard let port = configuration.port else { return [] }
        let router = Router(context: BasicRequestContext.self)
        let access = MetricsAccessMiddleware(token: configuration.token, servedWithoutToken: true)
        let feature = self
        router.get("/metrics") { request, context in
            try access.check(request.headers)
            return Response(
                status: .ok, headers: [.contentType: MetricsFeature.contentType], body: .init(byteBuffer: ByteBuffer(bytes: try await feature.scrape()))
            )
        }
        let (host, onListening) = (self.host, self.onListening)
        return [
            Application(
                router: router, configuration: .init(address: .hostname(host, port: port), serverName: "FitBase metrics"),
                onServerRunning: { channel in
                    let shownHost = host.contains(":") ? "[\(host)]" : host
                    await onListening("http://\(shownHost):\(channel.localAddress?.port ?? port)/metrics")
                },
                logger: logger
            )
        ]
    }

    /// Prometheus' text format, version 0.0.4.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}

/// Who may read `/metrics`: a caller presenting `Authorization: Bearer <FITBASE_METRICS_TOKEN>`, compared in constant
/// time; without a token configured, nobody on the API's port (404: the endpoint is off) and anybody on the metrics port.
struct MetricsAccessMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let token: String?
    let servedWithoutToken: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try check(request.headers)
        return try await next(request, context)
    }

    func check(_ headers: HTTPFields) throws(Problem) {
        guard let token else {
            if servedWithoutToken { return }
            throw Problem.notFound("Metrics are off: set FITBASE_METRICS_TOKEN (or --metrics-port) to serve them.")
        }
        guard let header = headers[.authorization] else {
            throw Problem.unauthenticated(.authenticationRequired, "Metrics need the metrics token: Authorization: Bearer <FITBASE_METRICS_TOKEN>.")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer",
            Data(SHA256.hash(data: Data(parts[1].utf8))) == Data(SHA256.hash(data: Data(token.utf8)))
        else {
            throw Problem.unauthenticated(.invalidToken, "That is not the metrics token.")
        }
    }
}

/// The levels `/metrics` reads as it is scraped: the database pool's use, this instance's open event streams, and the
/// outbox's jobs by kind and status (the same rows on every instance).
final class MetricsLevels: Sendable {
    let database: Database
    let metrics: ServerMetrics
    /// The outbox's label sets reported before: one that has no rows now is reported as 0, not left at its last value.
    private let outboxSeen = Mutex<Set<[String]>>([])

    init(database: Database, metrics: ServerMetrics) {
        self.database = database
        self.metrics = metrics
    }

    func read() async throws {
        let use = database.poolUse
        metrics.level("fitbase_database_pool_in_use", use.readers, [("use", "read")])
        metrics.level("fitbase_database_pool_in_use", use.transactions, [("use", "transaction")])
        metrics.level("fitbase_database_writers_waiting", use.writersWaiting, [("engine", database.engine.rawValue)])
        metrics.level("fitbase_event_streams_open", database.eventHub.openStreams, [])
        let rows = try await database.withConnection { db in
            try await db.raw("""
                SELECT kind, status, COUNT(*) AS jobs, SUM(CASE WHEN attempts > 0 THEN 1 ELSE 0 END) AS retried FROM outbox GROUP BY kind, status
                """).all()
        }
        var counts: [[String]: (jobs: Int, retried: Int)] = [:]
        for row in rows {
            let key = [try row.decode(column: "kind", as: String.self), try row.decode(column: "status", as: String.self)]
            counts[key] = (try row.decode(column: "jobs", as: Int.self), try row.decode(column: "retried", as: Int?.self) ?? 0)
        }
        let reported = outboxSeen.withLock { seen in
            seen.formUnion(counts.keys)
            return seen
        }
        for key in reported {
            let value = counts[key] ?? (0, 0)
            metrics.level("fitbase_outbox_jobs", value.jobs, [("kind", key[0]), ("status", key[1])])
            metrics.level("fitbase_outbox_retried_jobs", value.retried, [("kind", key[0]), ("status", key[1])])
        }
    }
}

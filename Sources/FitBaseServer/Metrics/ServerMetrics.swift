import CoreMetrics
import HTTPTypes
import Prometheus
import Synchronization

/// One application's metrics: a Prometheus registry of its own, written through swift-metrics' API with a factory over
/// that registry.
///
/// `MetricsSystem.bootstrap` can run once per process, and the tests build many applications in one process (a global
/// registry would also mix their counts). So nothing here touches `MetricsSystem`: every recorder is made with
/// `factory:` — this application's ``PrometheusMetricsFactory`` — and the parts that record are handed this object by
/// the ``ServerFoundation``. Libraries that record through the global `MetricsSystem` stay on its no-op default.
final class ServerMetrics: Sendable {
    /// What `GET /metrics` writes out.
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Media links answered on the event loop, ahead of the router (``MediaLinkRoute``): tests tell the two
    /// paths apart by it.
    let mediaLinksAnsweredAhead = Atomic<Int>(0)
    /// Catalog reads answered the same way (``CatalogAheadRoute``).
    let catalogAnsweredAhead = Atomic<Int>(0)

    /// Request latency buckets, in seconds: 1 ms to 10 s.
    static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10),
    ]

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.latencyBuckets
        self.factory = factory
    }

    /// The recorders of one route (`operation` on `method`), made once when the route is registered.
    func route(operation: String, method: String) -> RouteRecorder {
        RouteRecorder(
            factory: factory, operation: operation, method: method,
            timer: CoreMetrics.Timer(label: "fitbase_http_request_duration_seconds", dimensions: [("operation", operation)], factory: factory)
        )
    }

    /// One route's request counters (one per status, made on first use) and its latency histogram: a request records
    /// into them without looking its metrics up in the registry by name and labels.
    final class RouteRecorder: Sendable {
        private let factory: PrometheusMetricsFactory
        private let operation: String
        private let method: String
        private let timer: CoreMetrics.Timer
        private let counters = Mutex<[Int: CoreMetrics.Counter]>([:])

        fileprivate init(factory: PrometheusMetricsFactory, operation: String, method: String, timer: CoreMetrics.Timer) {
            self.factory = factory
            self.operation = operation
            self.method = method
            self.timer = timer
        }

        /// One answered request.
        func record(status: Int, duration: Duration) {
            let counter = counters.withLock { counters in
                if let counter = counters[status] { return counter }
                let counter = CoreMetrics.Counter(
                    label: "fitbase_http_requests_total", dimensions: [("operation", operation), ("method", method), ("status", String(status))],
                    factory: factory
                )
                counters[status] = counter
                return counter
            }
            counter.increment()
            timer.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        }
    }

    /// Changes a sync pull served, by collection.
    func syncPulled(_ count: Int, collection: String) {
        CoreMetrics.Counter(label: "fitbase_sync_pulled_changes_total", dimensions: [("collection", collection)], factory: factory)
            .increment(by: count)
    }

    /// Mutations a sync push applied or refused, by collection and result (`applied`, `conflict`, `rejected`, …).
    func syncPushed(_ count: Int, collection: String, result: String) {
        CoreMetrics.Counter(
            label: "fitbase_sync_pushed_mutations_total", dimensions: [("collection", collection), ("result", result)], factory: factory
        ).increment(by: count)
    }

    /// A webhook delivery from `source` (`appstore`, `stripe`, `apple_id`) and what became of it (`processed`,
    /// `duplicate`, `rejected`, `failed`).
    func webhook(source: String, outcome: String) {
        CoreMetrics.Counter(label: "fitbase_webhook_deliveries_total", dimensions: [("source", source), ("outcome", outcome)], factory: factory)
            .increment()
    }

    /// Runs a webhook's handler and counts what became of the delivery: the outcome it names, or `rejected` when it
    /// throws a problem of the sender's making (a bad signature, a malformed payload) and `failed` for anything else.
    func webhook<Output>(source: String, _ handle: () async throws -> (Output, outcome: String)) async throws -> Output {
        do {
            let (output, outcome) = try await handle()
            webhook(source: source, outcome: outcome)
            return output
        } catch {
            let status = ProblemMapping.problem(for: error)?.status.code ?? 500
            webhook(source: source, outcome: (400..<500).contains(status) ? "rejected" : "failed")
            throw error
        }
    }

    /// A level read when the metrics are scraped (pool use, open streams, outbox depth).
    func level(_ name: String, _ value: Int, _ dimensions: [(String, String)]) {
        CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory).record(value)
    }

    /// The registry in Prometheus' text exposition format (version 0.0.4).
    func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        return buffer
    }
}

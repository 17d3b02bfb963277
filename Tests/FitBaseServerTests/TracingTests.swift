import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import FitBaseServer

/// A local OpenTelemetry collector (`POST /v1/traces`, OTLP/HTTP with JSON bodies) keeping the spans it was sent.
final class FakeCollector: Sendable {
    let url: String
    /// The bodies received, as sent.
    private let received = Mutex<[Data]>([])

    init(url: String) {
        self.url = url
    }

    /// Every span received so far, each with its resource's `service.name` under `"service"`.
    var spans: [[String: Any]] {
        received.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }.flatMap { batch -> [[String: Any]] in
                (batch["resourceSpans"] as? [[String: Any]] ?? []).flatMap { resource -> [[String: Any]] in
                    let service = Self.attributes(resource["resource"] as? [String: Any])["service.name"]
                    return (resource["scopeSpans"] as? [[String: Any]] ?? []).flatMap { scope in
                        (scope["spans"] as? [[String: Any]] ?? []).map { span in span.merging(["service": service as Any]) { a, _ in a } }
                    }
                }
        }
    }

    /// An id as hex: OTLP/JSON writes ids in hex, swift-otel's encoder (the protobuf JSON mapping) in base64.
    static func hex(_ id: Any?) -> String? {
        guard let text = id as? String else { return nil }
        if text.count % 2 == 0, text.allSatisfy(\.isHexDigit) { return text.lowercased() }
        return Data(base64Encoded: text).map { $0.map { String(format: "%02x", $0) }.joined() }
    }

    /// A span's (or resource's) attributes as plain values.
    static func attributes(_ object: [String: Any]?) -> [String: Any] {
        var values: [String: Any] = [:]
        for attribute in object?["attributes"] as? [[String: Any]] ?? [] {
            guard let key = attribute["key"] as? String, let value = attribute["value"] as? [String: Any] else { continue }
            values[key] = value["stringValue"] ?? value["intValue"].map { "\($0)" } ?? value["boolValue"] ?? value["doubleValue"]
        }
        return values
    }

    static func run(_ body: @escaping @Sendable (FakeCollector) async throws -> Void) async throws {
        let box = Mutex<FakeCollector?>(nil)
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            let data = Data(try await request.body.collect(upTo: 8 << 20).readableBytesView)
            guard request.headers[.contentType]?.hasPrefix("application/json") == true, (try? JSONSerialization.jsonObject(with: data)) is [String: Any],
                let collector = box.withLock({ $0 })
            else { return Response(status: .badRequest) }
            collector.received.withLock { $0.append(data) }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
        }
        try await withLiveServer(Application(router: router, logger: TestDatabase.logger)) { _, url in
            let collector = FakeCollector(url: url.absoluteString)
            box.withLock { $0 = collector }
            try await body(collector)
        }
    }
}

/// Requests traced to an OpenTelemetry collector when one is set: one server span per request, named by its route,
/// continuing the caller's trace, never carrying the query.
@Suite struct TracingTests {
    @Test func eachRequestIsASpanNamedByItsRouteInTheCallersTrace() async throws {
        try await FakeCollector.run { collector in
            let tracing = TracingConfiguration(endpoint: collector.url + "/v1/traces", format: .json, serviceName: "fitbase-test", exportDelay: .milliseconds(50))
            try await withApp(.sqlite, options: .init(live: true, demoCatalog: true, configure: { $0.tracing = tracing })) { client, _ in
                let list = try json(try await client.json(.get, "/v1/workouts?limit=1"))
                let workout = try #require((list["items"] as? [[String: Any]])?.first?["id"] as? String)
                let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
                let parentID = "00f067aa0ba902b7"
                let fetched = try await client.execute(
                    uri: "/v1/workouts/\(workout)", method: .get, headers: [HTTPField.Name("traceparent")!: "00-\(traceID)-\(parentID)-01"]
                )
                #expect(fetched.status == .ok)
                #expect(try await client.execute(uri: "/v1/users/search?q=someone%40example.com", method: .get).status.code >= 400)

                var spans: [[String: Any]] = []
                for _ in 0..<100 where spans.count < 3 {
                    try await Task.sleep(for: .milliseconds(100))
                    spans = collector.spans
                }
                let get = try #require(spans.first { FakeCollector.hex($0["traceId"]) == traceID }, "spans: \(spans)")
                let attributes = FakeCollector.attributes(get)
                #expect(FakeCollector.hex(get["parentSpanId"]) == parentID)
                #expect(get["name"] as? String == "GET \(attributes["http.route"] as? String ?? "?")")
                #expect((attributes["http.route"] as? String)?.contains(workout) == false)
                #expect(attributes["url.path"] as? String == "/v1/workouts/\(workout)")
                #expect(attributes["http.response.status_code"] as? String == "200")
                #expect((attributes["fitbase.request_id"] as? String) == fetched.headers[.requestID])
                #expect(get["service"] as? String == "fitbase-test")
                // A request no route matched is named by its method alone.
                let unmatched = try #require(spans.first { FakeCollector.attributes($0)["url.path"] as? String == "/v1/users/search" })
                #expect(unmatched["name"] as? String == "GET" && FakeCollector.attributes(unmatched)["http.route"] == nil)
                // Nothing of a query reaches the collector.
                #expect(!spans.contains { "\($0)".contains("example.com") })
            }
        }
    }

    @Test func theStandardVariablesTurnTracesOnAndAnExporterThatIsNotBuiltInIsRefused() throws {
        #expect(try TracingConfiguration.resolve(environment: [:]).isEnabled == false)
        let base = try TracingConfiguration.resolve(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SERVICE_NAME": "coach-api"])
        #expect(base.endpoint == "http://collector:4318/v1/traces" && base.serviceName == "coach-api" && base.format == .protobuf)
        let traces = try TracingConfiguration.resolve(environment: [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/traces",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        ])
        #expect(traces.endpoint == "https://collector/traces" && traces.format == .json)
        #expect(throws: ConfigurationError.self) { try TracingConfiguration.resolve(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]) }
        #expect(throws: ConfigurationError.self) { try TracingConfiguration.resolve(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"]) }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Whether and where OpenTelemetry traces go: one server span per request, sent over OTLP/HTTP by swift-otel's batch
/// processor (``RequestTracing``).
///
/// | setting | environment | default |
/// |---|---|---|
/// | the collector's traces URL | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces` | unset: no traces |
/// | wire format | `OTEL_EXPORTER_OTLP_PROTOCOL` | `http/protobuf` (`http/json` too; `grpc` is not built in) |
/// | service name | `OTEL_SERVICE_NAME` | `fitbase` |
///
/// swift-otel reads the other standard `OTEL_*` variables itself (sampler, headers, batch sizes and delays).
public struct TracingConfiguration: Sendable, Equatable {
    public enum WireFormat: String, Sendable, Equatable {
        case protobuf = "http/protobuf"
        case json = "http/json"
    }

    /// The URL spans are posted to; `nil`: no traces.
    public var endpoint: String?
    public var format: WireFormat
    public var serviceName: String
    /// How long finished spans wait to be sent together.
    public var exportDelay: Duration

    public init(endpoint: String? = nil, format: WireFormat = .protobuf, serviceName: String = "fitbase", exportDelay: Duration = .seconds(5)) {
        self.endpoint = endpoint
        self.format = format
        self.serviceName = serviceName
        self.exportDelay = exportDelay
    }

    public var isEnabled: Bool { endpoint != nil }

    /// Reads the standard OpenTelemetry variables.
    static func resolve(environment: [String: String]) throws(ConfigurationError) -> TracingConfiguration {
        var configuration = TracingConfiguration()
        func nonEmpty(_ name: String) -> String? {
            environment[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let endpoint = nonEmpty("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").map { ($0, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") }
            ?? nonEmpty("OTEL_EXPORTER_OTLP_ENDPOINT").map { ($0.hasSuffix("/") ? $0 + "v1/traces" : $0 + "/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT") }
        if let (url, source) = endpoint {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil else {
                throw ConfigurationError(setting: "otlp-endpoint", source: source, value: url, expected: "an http:// or https:// URL of an OTLP/HTTP collector")
            }
            configuration.endpoint = url
        }
        if let text = nonEmpty("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? nonEmpty("OTEL_EXPORTER_OTLP_PROTOCOL") {
            guard let format = WireFormat(rawValue: text) else {
                throw ConfigurationError(
                    setting: "otlp-protocol", source: "OTEL_EXPORTER_OTLP_PROTOCOL", value: text,
                    expected: "http/protobuf or http/json (this build has no gRPC exporter)"
                )
            }
            configuration.format = format
        }
        if let name = nonEmpty("OTEL_SERVICE_NAME") { configuration.serviceName = name }
        return configuration
    }
}

/// The tracer requests are traced with and the service that sends its spans (run with the application's).
struct RequestTracing: Sendable {
    let tracer: any Tracer
    let service: any Service

    /// swift-otel's tracer and batch exporter for `configuration`; `nil` when traces are off.
    static func make(_ configuration: TracingConfiguration, logLevel: Logger.Level) throws -> RequestTracing? {
        guard let endpoint = configuration.endpoint else { return nil }
        var otel = OTel.Configuration.default
        otel.serviceName = configuration.serviceName
        otel.diagnosticLogLevel = logLevel <= .debug ? .debug : .warning
        otel.metrics.enabled = false
        otel.logs.enabled = false
        otel.traces.enabled = true
        otel.traces.exporter = .otlp
        otel.traces.otlpExporter.endpoint = endpoint
        otel.traces.otlpExporter.protocol = configuration.format == .json ? .httpJSON : .httpProtobuf
        otel.traces.batchSpanProcessor.scheduleDelay = configuration.exportDelay
        let backend = try OTel.makeTracingBackend(configuration: otel)
        return RequestTracing(tracer: backend.factory, service: backend.service)
    }
}

/// One server span per request, named by its method and route (`GET /v1/workouts/:id`), child of the caller's
/// `traceparent` when it sends one. It carries the method, the route, the path (never the query, which may hold an
/// address someone searched for), the status and the request id; a 5xx or a thrown error marks it failed, by the
/// error's type only.
struct RequestTracingMiddleware<Context: RequestContext>: RouterMiddleware {
    let tracer: any Tracer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var parent = ServiceContext.topLevel
        tracer.extract(request.headers, into: &parent, using: HTTPFieldsExtractor())
        let method = request.method.rawValue
        let span = tracer.startSpan(method, context: parent, ofKind: .server)
        defer { span.end() }
        span.attributes["http.request.method"] = method
        span.attributes["url.path"] = request.uri.path
        if let id = RequestIDMiddleware.current?.server { span.attributes["fitbase.request_id"] = id }
        do {
            let response = try await ServiceContext.$current.withValue(span.context) { try await next(request, context) }
            name(span, method: method, context: context)
            span.attributes["http.response.status_code"] = response.status.code
            if response.status.code >= 500 { span.setStatus(.init(code: .error)) }
            return response
        } catch {
            name(span, method: method, context: context)
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            span.attributes["http.response.status_code"] = status
            span.attributes["error.type"] = String(describing: type(of: error))
            if status >= 500 { span.setStatus(.init(code: .error)) }
            throw error
        }
    }

    /// The span's name once routing has matched the request (the bare method when nothing matched).
    private func name(_ span: any Span, method: String, context: Context) {
        // Hummingbird names a request no route matched `NotFound`: that is no route.
        guard let route = context.endpointPath, route.hasPrefix("/") else { return }
        span.operationName = "\(method) \(route)"
        span.attributes["http.route"] = route
    }
}

/// Reads W3C trace context (`traceparent`, `tracestate`) from request headers.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}

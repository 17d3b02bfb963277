import FitBaseAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// Registers the generated handlers on the Hummingbird router and records each route in the ``RouteTable``.
///
/// The bridge between the two request types is written for the common case: ``BodyLimitMiddleware`` has already
/// collected the request body, so it is handed over as one buffer; a response body of known length (every JSON
/// answer) is gathered into one buffer and sent with its length, while a body of unknown length (the event stream)
/// is streamed as it is produced.
///
/// Middleware that concerns a few routes only (``ScopedMiddleware``) wraps just those routes, so the others do not pay
/// a frame for it on every request.
struct RoutingTransport: ServerTransport {
    let router: Router<FitBaseRequestContext>
    let routes: RouteTable
    var scoped: [ScopedMiddleware] = []
    /// Operations answered first by a handler of their own (see ``DirectRoute``).
    var direct: [DirectRoute] = []
    /// Where every route counts its requests, and the contract's names for the routes (see ``RequestMetricsMiddleware``);
    /// `nil` when metrics are off: requests are then not counted at all.
    var metrics: (recorder: ServerMetrics, names: OperationNames)? = nil

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        routes.add(path, method: method)
        let group = router.group()
        if let metrics {
            group.add(middleware: RequestMetricsMiddleware(recorder: metrics.recorder.route(operation: metrics.names.name(method, path), method: method.rawValue)))
        }
        for middleware in scoped where middleware.applies(path, method) { group.add(middleware: middleware.middleware) }
        let direct = self.direct.first { $0.method == method && $0.path == path }?.respond
        group.on(RouterPath(path), method: method) { request, context in
            if let direct, let response = try await direct(request, context) { return response }
            var parameters: [String: Substring] = [:]
            for (key, value) in context.parameters where parameters[String(key)] == nil { parameters[String(key)] = value }
            let (response, body) = try await handler(request.head, try await Self.body(of: request), ServerRequestMetadata(pathParameters: parameters))
            return try await Self.response(response, body: body)
        }
    }

    /// The request's body for the generated handler (already collected: this only hands the buffer over); `nil` when
    /// the request has none, so an operation whose body is optional sees it absent rather than as empty JSON.
    private static func body(of request: Request) async throws -> HTTPBody? {
        if request.hasNoBody { return nil }
        var request = request
        let buffer = try await request.collectBody(upTo: .max)
        return buffer.readableBytes == 0 ? nil : HTTPBody(buffer.readableBytesView)
    }

    private static func response(_ response: HTTPResponse, body: HTTPBody?) async throws -> Response {
        guard let body else { return Response(status: response.status, headers: response.headerFields, body: .init(byteBuffer: ByteBuffer())) }
        guard case .known(let length) = body.length else {
            return Response(status: response.status, headers: response.headerFields, body: .init(asyncSequence: body.map { ByteBuffer(bytes: $0) }))
        }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(Int(length))
        for try await chunk in body { buffer.writeBytes(chunk) }
        return Response(status: response.status, headers: response.headerFields, body: .init(byteBuffer: buffer))
    }
}

/// Middleware for the routes `applies` picks (by the contract's path template and method), run after the router's own
/// middleware, in the order given.
struct ScopedMiddleware: Sendable {
    let applies: @Sendable (_ path: String, _ method: HTTPRequest.Method) -> Bool
    let middleware: any MiddlewareProtocol<Request, Response, FitBaseRequestContext>
}

/// An operation of the contract answered by a handler that writes its response without the generated server, for the
/// requests it fully understands; it returns `nil` for any other, which the generated handler then answers. The
/// handler must send exactly what the generated one would (tests compare the two).
struct DirectRoute: Sendable {
    let method: HTTPRequest.Method
    /// The contract's path template, e.g. `/v1/workouts/{workoutId}`.
    let path: String
    let respond: @Sendable (Request, FitBaseRequestContext) async throws -> Response?

    /// The route of an operation that takes a JSON body, read without the generated server's decoder: `read` turns
    /// the body, parsed by ``JSONValue/parse(_:)`` in one pass, into the operation's input, or returns `nil` for
    /// anything it does not fully understand (left to the generated handler, as is a body not labelled JSON or a
    /// caller that takes no JSON); `answer` runs the operation, whose output is encoded with the generated server's
    /// settings.
    static func jsonBody<Input: Sendable, Output: Encodable & Sendable>(
        _ method: HTTPRequest.Method, _ path: String, read: @escaping @Sendable (JSONValue?) -> Input?,
        answer: @escaping @Sendable (Input) async throws -> Output
    ) -> DirectRoute {
        writtenJSONBody(method, path, read: read) { input in ByteBuffer(bytes: try encoder.encode(try await answer(input))) }
    }

    /// ``jsonBody(_:_:read:answer:)`` for an operation that writes its JSON answer itself (exactly as the generated
    /// server's encoder would), sent with `status`.
    /// (A name of its own: `ByteBuffer` is `Encodable`, so an overload of ``jsonBody(_:_:read:answer:)`` taking a
    /// trailing closure could be either.)
    static func writtenJSONBody<Input: Sendable>(
        _ method: HTTPRequest.Method, _ path: String, status: HTTPResponse.Status = .ok, read: @escaping @Sendable (JSONValue?) -> Input?,
        write: @escaping @Sendable (Input) async throws -> ByteBuffer
    ) -> DirectRoute {
        DirectRoute(method: method, path: path) { request, _ in
            guard hasJSONBody(request), acceptsJSON(request) else { return nil }
            var request = request
            let body = try await request.collectBody(upTo: .max)
            guard let input = body.withUnsafeReadableBytes({ read(JSONValue.parse($0)) }) else { return nil }
            return json(try await write(input), status: status)
        }
    }

    /// The items of a body that is an object with one field, `name`, holding an array — each read by `item` — or `nil`
    /// when the body is anything else or one item is not understood.
    static func array<Item>(named name: String, in json: JSONValue?, item: (JSONValue) -> Item?) -> [Item]? {
        guard case .object(let fields)? = json, fields.count == 1, case .array(let values)? = fields[name] else { return nil }
        var items: [Item] = []
        items.reserveCapacity(values.count)
        for value in values {
            guard let read = item(value) else { return nil }
            items.append(read)
        }
        return items
    }

    /// A 200 (or `status`) with a JSON body, labelled as the generated server labels its JSON.
    static func json(_ body: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    /// An operation answered with an output its direct route does not write (a bug: a 500, logged).
    struct UnexpectedOutput: Error {
        let operation: String
    }

    /// The generated server's JSON settings (see `registerHandlers` in `buildApplication`): sorted keys, slashes not
    /// escaped, instants as ``InternetDateTimeTranscoder`` writes them.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .internetDateTime
        return encoder
    }()

    /// Whether a request's body is labelled JSON as the generated server reads it: `application/json` with any
    /// parameters, or no label at all (the generated server then takes the operation's one content type).
    static func hasJSONBody(_ request: Request) -> Bool {
        guard let label = request.headers[.contentType] else { return true }
        if label == "application/json" || label == "application/json; charset=utf-8" { return true }  // as nearly every client sends it
        let mediaType = label.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return mediaType == "application/json"
    }

    /// Whether the caller takes a JSON answer: no `Accept`, or one listing only `application/json`, `application/*` or
    /// `*/*` (with parameters but no quality of 0). Anything else goes to the generated server, which knows the rules.
    static func acceptsJSON(_ request: Request) -> Bool {
        acceptsJSON(values: request.headers[values: .accept])
    }

    /// ``acceptsJSON(_:)`` of a request whose `Accept` fields are `values`.
    static func acceptsJSON(values: [String]) -> Bool {
        if values.isEmpty { return true }
        for value in values {
            for item in value.split(separator: ",") {
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard let mediaType = parts.first, ["application/json", "application/*", "*/*"].contains(mediaType) else { return false }
                if parts.dropFirst().contains(where: { $0.hasPrefix("q=") && Double($0.dropFirst(2)) == 0 }) { return false }
            }
        }
        return true
    }
}

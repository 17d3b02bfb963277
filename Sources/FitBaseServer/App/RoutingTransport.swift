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
struct RoutingTransport: ServerTransport {
    let router: Router<FitBaseRequestContext>
    let routes: RouteTable

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        routes.add(path, method: method)
        router.on(RouterPath(path), method: method) { request, context in
            var parameters: [String: Substring] = [:]
            for (key, value) in context.parameters where parameters[String(key)] == nil { parameters[String(key)] = value }
            let (response, body) = try await handler(request.head, try await Self.body(of: request), ServerRequestMetadata(pathParameters: parameters))
            return try await Self.response(response, body: body)
        }
    }

    /// The request's body for the generated handler (already collected: this only hands the buffer over).
    private static func body(of request: Request) async throws -> HTTPBody {
        if request.hasNoBody { return HTTPBody() }
        var request = request
        return HTTPBody(try await request.collectBody(upTo: .max).readableBytesView)
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

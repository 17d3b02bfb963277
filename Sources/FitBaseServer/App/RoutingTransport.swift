import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime

/// Registers the generated handlers on the Hummingbird router and records each route in the ``RouteTable``.
struct RoutingTransport: ServerTransport {
    let router: Router<FitBaseRequestContext>
    let routes: RouteTable

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        routes.add(path, method: method)
        router.register(handler, method: method, path: path)
    }
}

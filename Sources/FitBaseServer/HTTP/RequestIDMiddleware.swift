import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id of the server's own (a new UUID), echoed in `X-Request-ID` and logged as `request_id`
/// with every line written while the request is served. An `X-Request-ID` the client sent, when it is a sensible
/// token, is kept beside it as the client's — echoed in `X-Client-Request-ID`, logged as `client_request_id` and
/// recorded by the audit log apart from the server's — never taken for the server's own.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = UUID.random().lowercasedString
        let client = request.headers[.requestID].flatMap(Self.acceptable)
        var context = context
        context.requestID = id
        context.clientRequestID = client
        var response = try await Self.$current.withValue(Ids(server: id, client: client)) { try await next(request, context) }
        response.headers[.requestID] = id
        if let client { response.headers[.clientRequestID] = client }
        return response
    }

    struct Ids: Sendable {
        var server: String
        var client: String?
    }

    /// The ids of the request the current task serves.
    @TaskLocal static var current: Ids?

    /// Adds `request_id` (and `client_request_id`) to every line logged while a request is served, by any logger.
    /// (Setting it on the request's logger instead made the standard stream handler re-render its metadata on every
    /// request: 4.6 % of the CPU of the cheapest route.)
    static let metadataProvider = Logger.MetadataProvider {
        guard let ids = current else { return [:] }
        guard let client = ids.client else { return ["request_id": .string(ids.server)] }
        return ["request_id": .string(ids.server), "client_request_id": .string(client)]
    }

    /// Accepts 1–128 characters of letters, digits and `-_.:`, so ids are safe to log and to echo.
    static func acceptable(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") })
        else { return nil }
        return value
    }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-ID")!
    static let clientRequestID = Self("X-Client-Request-ID")!
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}

/// What the `fitbase` executable needs to set up logging.
package enum RequestLogging {
    /// `request_id` on every line logged while a request is served (``RequestIDMiddleware``).
    package static var metadataProvider: Logger.MetadataProvider { RequestIDMiddleware.metadataProvider }
}

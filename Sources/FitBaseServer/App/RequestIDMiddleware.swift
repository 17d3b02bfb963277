import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id: the caller's `X-Request-ID` when it is a sensible token, a new UUID otherwise.
/// The id is echoed in the response and logged as `request_id` with every line written while the request is served.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = request.headers[.requestID].flatMap(Self.acceptable) ?? UUID.random().lowercasedString
        var context = context
        context.requestID = id
        var response = try await Self.$current.withValue(id) { try await next(request, context) }
        response.headers[.requestID] = id
        return response
    }

    /// The id of the request the current task serves.
    @TaskLocal static var current: String?

    /// Adds `request_id` to every line logged while a request is served, by any logger. (Setting it on the request's
    /// logger instead made the standard stream handler re-render its metadata on every request: 4.6 % of the CPU of
    /// the cheapest route.)
    static let metadataProvider = Logger.MetadataProvider {
        current.map { ["request_id": .string($0)] } ?? [:]
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

import HTTPTypes
import Hummingbird
import NIOCore

/// Refuses request bodies over the configured limit with 413 before any handler reads them.
///
/// A declared `Content-Length` over the limit is refused at once; otherwise the body is collected up to the limit
/// (bodies are JSON documents, so buffering them is what handlers would do anyway).
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let maxBytes: Int
    /// Routes with a limit of their own (a profile photo is larger than any JSON body).
    var exceptions: [Exception] = []

    /// A route's own limit: the method and the exact request path.
    struct Exception: Sendable {
        let method: HTTPRequest.Method
        let path: String
        let maxBytes: Int
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let maxBytes = exceptions.first { $0.method == request.method && $0.path == request.uri.path }?.maxBytes ?? self.maxBytes
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > maxBytes {
            throw Problem.payloadTooLarge(limit: maxBytes)
        }
        // A GET or HEAD that announces no body has none: nothing to collect.
        if request.hasNoBody { return try await next(request, context) }
        var request = request
        do {
            _ = try await request.collectBody(upTo: maxBytes)
        } catch is NIOTooManyBytesError {
            throw Problem.payloadTooLarge(limit: maxBytes)
        }
        return try await next(request, context)
    }
}

extension Request {
    /// A GET or HEAD without `Content-Length` or `Transfer-Encoding`: HTTP/1.1 gives it no body.
    var hasNoBody: Bool {
        (head.method == .get || head.method == .head) && headers[.contentLength] == nil && headers[.transferEncoding] == nil
    }
}

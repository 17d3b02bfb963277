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
    /// Routes with a limit of their own (a profile photo is larger than any JSON body; a video is streamed).
    var exceptions: [Exception] = []

    /// A route's own limit, for the requests `applies` picks by method and request path.
    struct Exception: Sendable {
        let maxBytes: Int
        /// Whether the body is left to the handler, which reads it as it arrives (only a declared length over the limit
        /// is refused here).
        var streamed = false
        let applies: @Sendable (HTTPRequest.Method, String) -> Bool
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let exception = exceptions.first { $0.applies(request.method, request.uri.path) }
        let maxBytes = exception?.maxBytes ?? self.maxBytes
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > maxBytes {
            throw Problem.payloadTooLarge(limit: maxBytes)
        }
        // A GET or HEAD that announces no body has none: nothing to collect. A streamed body is the handler's to read.
        if request.hasNoBody || exception?.streamed == true { return try await next(request, context) }
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

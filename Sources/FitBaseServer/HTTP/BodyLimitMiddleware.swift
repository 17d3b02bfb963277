import Hummingbird
import NIOCore

/// Refuses request bodies over the configured limit with 413 before any handler reads them.
///
/// A declared `Content-Length` over the limit is refused at once; otherwise the body is collected up to the limit
/// (bodies are JSON documents, so buffering them is what handlers would do anyway).
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let maxBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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

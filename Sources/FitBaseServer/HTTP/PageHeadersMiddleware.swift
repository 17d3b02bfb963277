import HTTPTypes
import Hummingbird

/// Headers of the server-rendered pages people open from a link (the account pages under `/auth/`, the invite page
/// under `/group/invite/`): never cached, never framed, no referrer (their URLs hold tokens), no scripts.
struct PageHeadersMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext

    /// The middleware for the pages whose path (the contract's template) starts with `prefix`.
    static func scoped(under prefix: String) -> ScopedMiddleware {
        ScopedMiddleware(applies: { path, _ in path.hasPrefix(prefix) }, middleware: PageHeadersMiddleware())
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.cacheControl] = "no-store"
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        if response.headers[.contentType]?.hasPrefix("text/html") == true { response.headers[.contentType] = "text/html; charset=utf-8" }
        return response
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xFrameOptions = Self("X-Frame-Options")!
}

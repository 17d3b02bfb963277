import FitBaseCore
import HTTPTypes
import Hummingbird

extension RequestClass {
    /// The class of the operation registered at `path` (the contract's template) for `method`; `nil` for the exempt:
    /// the liveness probe, which touches nothing. The one place that decides; an operation not named here is a read
    /// when it is a GET and a write otherwise.
    static func of(_ method: HTTPRequest.Method, _ path: String) -> RequestClass? {
        switch (method, path) {
        case (_, "/healthz"):
            nil
        // Signed by Apple or Stripe (verifying costs a signature check and a database lookup), and the readiness probe
        // (a database round trip): per address, generously.
        case (_, "/readyz"), (.post, "/v1/webhooks/stripe"), (.post, "/v1/webhooks/appstore"), (.post, "/v1/auth/apple/notifications"):
            .external
        // May ask the language model (today's answer once per day and inputs; a refresh every time).
        case (.get, "/v1/recommendations/today"), (.post, "/v1/recommendations/refresh"):
            .model
        // Decrypt samples, read every log of the account, or build its whole export; the week's plan and a plan's
        // progression read the account's history, cycle and the catalog (rules only, no model).
        case (.get, "/v1/health/samples"), (.get, "/v1/health/summary"), (.get, "/v1/health/overview"), (.get, "/v1/history/stats"), (.get, "/v1/me/export"),
            (.get, "/v1/recommendations/week"), (.get, "/v1/plans/{planId}/progression"):
            .expensive
        // Everything else, device registration included (an app registers once per launch): a read or a write.
        case (.get, _), (.head, _):
            .reads
        default:
            .writes
        }
    }
}

/// Counts each request of one ``RequestClass`` against its caller's and its client address's buckets (see
/// ``RequestRateLimiter``). Past either limit it answers 429 `rate_limited` with `Retry-After` and runs nothing;
/// every answer of a limited route carries `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers)
/// for the tighter bucket.
///
/// It runs inside ``AuthenticationMiddleware``, which has named the caller: an anonymous request (or one with a token
/// that failed) is limited by its address only.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let limiter: RequestRateLimiter
    let requestClass: RequestClass

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let scope = RequestScope.current
        guard let reading = limiter.admit(requestClass, user: scope.caller?.user, address: scope.clientAddress) else {
            return try await next(request, context)
        }
        let headers = Self.headers(reading)
        guard reading.allowed else { throw Problem.rateLimited(reading, headers: headers) }
        do {
            var response = try await next(request, context)
            response.headers.append(contentsOf: headers)
            return response
        } catch {
            // Errors become problems here rather than in ProblemMiddleware so that they carry the headers too; what
            // is not a known problem goes on unchanged, to be logged there.
            guard var problem = ProblemMapping.problem(for: error) else { throw error }
            problem.headers.append(contentsOf: headers)
            throw problem
        }
    }

    /// `RateLimit-Policy: "writes";q=120;w=60` and `RateLimit: "writes";r=37;t=1`.
    static func headers(_ reading: RequestRateLimiter.Reading) -> HTTPFields {
        let name = reading.requestClass.rawValue
        return [
            .rateLimitPolicy: "\"\(name)\";q=\(reading.rate.capacity);w=\(reading.rate.seconds)",
            .rateLimit: "\"\(name)\";r=\(reading.remaining);t=\(reading.secondsUntilToken)",
        ]
    }

    /// The middleware of every class, for the routes of that class (``RequestClass/of(_:_:)``).
    static func scoped(_ limiter: RequestRateLimiter) -> [ScopedMiddleware] {
        RequestClass.allCases.map { requestClass in
            ScopedMiddleware(
                applies: { path, method in RequestClass.of(method, path) == requestClass },
                middleware: RateLimitMiddleware(limiter: limiter, requestClass: requestClass)
            )
        }
    }
}

extension Problem {
    /// 429 `rate_limited`: the request was not run.
    static func rateLimited(_ reading: RequestRateLimiter.Reading, headers: HTTPFields) -> Problem {
        var headers = headers
        headers[.retryAfter] = String(reading.secondsUntilToken)
        return Problem(
            .tooManyRequests, code: .rateLimited,
            detail: "Too many requests of the \"\(reading.requestClass.rawValue)\" class (at most \(reading.rate.capacity) per \(reading.rate.seconds) seconds); retry in \(reading.secondsUntilToken) seconds.",
            headers: headers
        )
    }
}

extension HTTPField.Name {
    static let rateLimit = Self("RateLimit")!
    static let rateLimitPolicy = Self("RateLimit-Policy")!
}

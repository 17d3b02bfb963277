import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// One structured log line per request: method, path, status, duration (and the request id from the metadata). Paths
/// that carry a secret (an invite token) are logged without it.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, status: response.status.code, since: start, context: context)
            return response
        } catch {
            log(request, status: (error as? any HTTPResponseError)?.status.code ?? 500, since: start, context: context)
            throw error
        }
    }

    /// Prefixes whose next segment is a secret: bearer tokens in a path, logged as `…`.
    private static let secretSegments = ["/v1/invites/", "/group/invite/", "/v1/media/"]

    /// `path` with secret segments replaced: `/v1/invites/<token>/accept` → `/v1/invites/…/accept`.
    static func loggable(_ path: String) -> String {
        for prefix in secretSegments where path.hasPrefix(prefix) {
            let rest = path.dropFirst(prefix.count)
            let tail = rest.firstIndex(of: "/").map { rest[$0...] } ?? ""
            return prefix + "…" + tail
        }
        return path
    }

    private func log(_ request: Request, status: Int, since start: ContinuousClock.Instant, context: Context) {
        context.logger.info("request", metadata: Self.metadata(method: request.method, path: request.uri.path, status: status, elapsed: ContinuousClock.now - start))
    }

    /// The fields of a request's line: method, path (its secrets left out), status and duration.
    static func metadata(method: HTTPRequest.Method, path: String, status: Int, elapsed: Duration) -> Logger.Metadata {
        let milliseconds = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        return [
            "method": .string(method.rawValue),
            "path": .string(loggable(path)),
            "status": .stringConvertible(status),
            "duration_ms": .string(String(format: "%.2f", milliseconds)),
        ]
    }
}

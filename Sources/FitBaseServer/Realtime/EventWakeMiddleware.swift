import HTTPTypes
import Hummingbird

/// Wakes this instance's event streams after every request that may have written events (any method but GET, HEAD
/// and OPTIONS), once its transaction has committed and the response is ready. A wake-up only makes each stream read
/// the event log, so a needless one costs a small query.
struct EventWakeMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let hub: EventHub

    /// The routes it wraps: those that may change data.
    static func applies(path: String, method: HTTPRequest.Method) -> Bool {
        ![.get, .head, .options].contains(method)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        hub.publish()
        return response
    }
}

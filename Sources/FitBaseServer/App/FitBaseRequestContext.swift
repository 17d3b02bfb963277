import Hummingbird
import Logging

/// The per-request context of every FitBase route.
public struct FitBaseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The request's id (from `X-Request-ID` or generated), also in the logger's metadata as `request_id`.
    public var requestID: String?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.requestID = nil
    }
}

import Hummingbird
import Logging
import NIOCore

/// The per-request context of every FitBase route.
public struct FitBaseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The request's id (from `X-Request-ID` or generated), also in the logger's metadata as `request_id`.
    public var requestID: String?
    /// The socket's peer (a proxy's address when behind one; see ``ClientAddress``).
    public var remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.requestID = nil
        self.remoteAddress = source.channel.remoteAddress
    }
}

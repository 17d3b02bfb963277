import Hummingbird
import Logging
import NIOCore

/// The per-request context of every FitBase route.
public struct FitBaseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The request's id, the server's own, also in the logger's metadata as `request_id`.
    public var requestID: String?
    /// The `X-Request-ID` the client sent, when sensible (see ``RequestIDMiddleware``).
    public var clientRequestID: String?
    /// The socket's peer (a proxy's address when behind one; see ``ClientAddress``).
    public var remoteAddress: SocketAddress?
    /// The connection the request came on (a route sending a file hands it to the connection: ``FileRegionResponses``).
    public var channel: (any Channel)?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.requestID = nil
        self.clientRequestID = nil
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }
}

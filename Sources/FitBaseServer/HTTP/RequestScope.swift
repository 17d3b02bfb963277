import FitBaseCore
import Foundation
import NIOCore

/// Who is calling, for the generated handlers, which see no Hummingbird context: set per request by
/// ``AuthenticationMiddleware`` as a task-local value.
struct RequestScope: Sendable {
    /// The verified caller, when the request carried a valid access token for a live session.
    var caller: Caller?
    /// Why the presented token was refused, when it was; reported only by operations that need a caller.
    var authenticationFailure: Problem?
    /// The request's id, the server's own (the audit log records it).
    var requestID: String?
    /// The id the client sent in `X-Request-ID`, recorded as the client's.
    var clientRequestID: String? = nil
    /// Where the request came from: the peer and `X-Forwarded-For`, resolved only when ``clientAddress`` is asked for
    /// (most requests never ask).
    var origin: ClientOrigin? = nil

    /// The client's address as per-client limits count it (see ``ClientAddress``): IPv6 grouped by /64; `nil` when
    /// unknown.
    var clientAddress: String? {
        origin.flatMap { ClientAddress.resolve(peer: $0.peer, forwardedFor: $0.forwardedFor, trusted: $0.trustedProxies) }
            .map(ClientAddress.bucket(of:))
    }

    @TaskLocal static var current = RequestScope(caller: nil, authenticationFailure: nil, requestID: nil)

    /// The caller, or the 401 problem an operation that requires authentication answers with.
    static func requireCaller() throws(Problem) -> Caller {
        if let caller = current.caller { return caller }
        throw current.authenticationFailure
            ?? .unauthenticated(.authenticationRequired, "This operation needs an access token: Authorization: Bearer <token>.")
    }
}

/// An authenticated caller.
struct Caller: Sendable, Equatable {
    let user: UserID
    let session: SessionID
    let role: Role
    /// When the user signed in to this session (re-authentication checks use it).
    let authenticatedAt: Date
    /// When the access token of the request expires (an event stream ends then).
    var expiresAt: Date = .distantFuture
}

/// What a request's client address is resolved from.
struct ClientOrigin: Sendable {
    var peer: SocketAddress?
    var forwardedFor: String?
    var trustedProxies: [AddressRange]
}

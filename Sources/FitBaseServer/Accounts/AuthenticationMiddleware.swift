import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// Reads `Authorization: Bearer <access token>`, verifies it and its session, and runs the rest of the request inside
/// a ``RequestScope`` naming the caller. A bad token does not fail public operations; it is reported by the ones that
/// need a caller.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let signer: SessionTokenSigner
    let sessions: SessionStore
    /// Proxies whose `X-Forwarded-For` is believed (`FITBASE_TRUSTED_PROXIES`).
    let trustedProxies: [AddressRange]
    /// Says once that clients all seem to come through one proxy nobody told us about.
    let proxyWarning: UntrustedProxyWarning

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var scope = RequestScope(caller: nil, authenticationFailure: nil, requestID: context.requestID, clientRequestID: context.clientRequestID)
        scope.origin = ClientOrigin(peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor], trustedProxies: trustedProxies)
        if trustedProxies.isEmpty { proxyWarning.check(peer: context.remoteAddress) }
        if let header = request.headers[.authorization] {
            do {
                scope.caller = try await caller(from: header)
            } catch let problem as Problem {
                scope.authenticationFailure = problem
            }
        }
        return try await RequestScope.$current.withValue(scope) {
            try await next(request, context)
        }
    }

    private func caller(from header: String) async throws -> Caller {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw Problem.unauthenticated(.invalidToken, "Use Authorization: Bearer <access token>.")
        }
        let claims = try await signer.verify(String(parts[1]))
        guard let role = try await sessions.liveSessionRole(claims.session, user: claims.user) else {
            throw Problem.unauthenticated(.sessionRevoked, "The session has ended; sign in again.")
        }
        return Caller(user: claims.user, session: claims.session, role: role, authenticatedAt: claims.authenticatedAt, expiresAt: claims.expiresAt)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}

/// Logs one warning, the first time a request arrives from a private or loopback address while
/// `FITBASE_TRUSTED_PROXIES` is empty: behind a proxy or load balancer, every client then shares its address, and the
/// per-address limits (sign-in, sign-up, requests) count them all together.
final class UntrustedProxyWarning: Sendable {
    private let warned = Atomic<Bool>(false)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func check(peer: SocketAddress?) {
        guard !warned.load(ordering: .relaxed), let address = peer?.ipAddress, let bytes = AddressRange.bytes(of: address),
            Self.privateRanges.contains(where: { $0.contains(bytes) }),
            !warned.exchange(true, ordering: .relaxed)
        else { return }
        logger.warning(
            "requests come from a private or loopback address and FITBASE_TRUSTED_PROXIES is empty: behind a proxy or load balancer every client shares its address, and per-address limits count them all as one; list the proxy in FITBASE_TRUSTED_PROXIES",
            metadata: ["peer": "\(address)"]
        )
    }

    /// Loopback, RFC 1918, carrier-grade NAT, IPv6 unique-local and link-local networks.
    private static let privateRanges = ["127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "::1/128", "fc00::/7", "fe80::/10"]
        .compactMap(AddressRange.init)
}

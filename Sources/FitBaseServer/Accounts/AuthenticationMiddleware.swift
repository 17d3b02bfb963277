import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird

/// Reads `Authorization: Bearer <access token>`, verifies it and its session, and runs the rest of the request inside
/// a ``RequestScope`` naming the caller. A bad token does not fail public operations; it is reported by the ones that
/// need a caller.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext
    let signer: SessionTokenSigner
    let sessions: SessionStore
    /// Proxies whose `X-Forwarded-For` is believed (`FITBASE_TRUSTED_PROXIES`).
    let trustedProxies: [AddressRange]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var scope = RequestScope(caller: nil, authenticationFailure: nil, requestID: context.requestID, clientRequestID: context.clientRequestID)
        scope.origin = ClientOrigin(peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor], trustedProxies: trustedProxies)
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

import Crypto
import Foundation
import Synchronization

/// The provider authentication token every push carries (`authorization: bearer <token>`): a JWT with the header
/// `{"alg": "ES256", "kid": <key id>}` and the claims `{"iss": <team id>, "iat": <seconds since 1970>}`, signed with
/// the team's APNs auth key.
///
/// Apple refuses a token older than an hour (`403 ExpiredProviderToken`) and one replaced more often than every 20
/// minutes (`429 TooManyProviderTokenUpdates`), and asks providers to reuse one token for all their pushes. So one
/// token serves every push, whatever the concurrency, until it is 50 minutes old; then the first send to notice makes
/// the next one, under the lock, while the others wait for it (one signature, never one per sender).
///
/// When Apple nevertheless calls the token expired (our clock is behind, or Apple's rules changed), every push that
/// was refused with it asks for a ``refresh(replacing:)``: the first makes a new token, the others find it already
/// replaced and resend with the new one. A refused token that was itself forced less than 20 minutes ago is not
/// replaced again (nil): Apple would answer `TooManyProviderTokenUpdates`, and the pushes are better retried later.
///
/// Signing is a few tens of microseconds, so it is done inside the lock, synchronously (hence swift-crypto rather
/// than JWTKit's asynchronous signer): that is what makes the token single-flight.
final class APNsProviderTokens: Sendable {
    /// One signed token.
    struct Token: Sendable, Equatable {
        let jwt: String
        let issuedAt: Date
    }

    /// A token older than this is replaced before use (Apple's limit is 60 minutes).
    static let routineLifetime: TimeInterval = 50 * 60
    /// At most one forced replacement in this long (Apple's lower limit between two tokens).
    static let minimumForcedInterval: TimeInterval = 20 * 60

    private struct State {
        var current: Token?
        var lastForcedRefresh: Date?
        var issued = 0
    }

    private let teamID: String
    private let keyID: String
    private let privateKey: P256.Signing.PrivateKey
    private let now: @Sendable () -> Date
    private let state = Mutex(State())

    init(teamID: String, keyID: String, privateKey: P256.Signing.PrivateKey, now: @escaping @Sendable () -> Date) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
        self.now = now
    }

    /// How many tokens were signed so far.
    var issuedCount: Int { state.withLock { $0.issued } }

    /// The token to send with, signed now if there is none or it is 50 minutes old.
    func current() throws -> Token {
        try state.withLock { state throws -> Token in
            let now = self.now()
            if let token = state.current, now.timeIntervalSince(token.issuedAt) < Self.routineLifetime {
                return token
            }
            let token = try sign(issuedAt: now)
            state.current = token
            state.issued += 1
            return token
        }
    }

    /// The token to resend with after Apple answered `ExpiredProviderToken` to `rejected`: a new one if `rejected` is
    /// still the current token, the current one if another sender already replaced it, and `nil` if the token was
    /// already forced less than 20 minutes ago.
    func refresh(replacing rejected: Token) throws -> Token? {
        try state.withLock { state throws -> Token? in
            if let current = state.current, current != rejected { return current }
            let now = self.now()
            if let last = state.lastForcedRefresh, now.timeIntervalSince(last) < Self.minimumForcedInterval { return nil }
            let token = try sign(issuedAt: now)
            state.current = token
            state.lastForcedRefresh = now
            state.issued += 1
            return token
        }
    }

    private func sign(issuedAt: Date) throws -> Token {
        struct Header: Encodable { let alg = "ES256"; let kid: String }
        struct Claims: Encodable { let iss: String; let iat: Int }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let iat = Int(issuedAt.timeIntervalSince1970.rounded(.down))
        let signingInput = Self.base64URL(try encoder.encode(Header(kid: keyID))) + "."
            + Self.base64URL(try encoder.encode(Claims(iss: teamID, iat: iat)))
        let signature = try privateKey.signature(for: Data(signingInput.utf8))
        return Token(jwt: signingInput + "." + Self.base64URL(signature.rawRepresentation), issuedAt: Date(timeIntervalSince1970: TimeInterval(iat)))
    }

    /// Base64url without padding (RFC 7515).
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

import Crypto
import FitBaseAPI
import FitBaseCore
import Foundation
import JWTKit

/// Signs and verifies the server's access tokens: ES256 JWTs with `sub`, `sid`, `iat`, `exp`, `iss` and `aud`.
///
/// The P-256 key is generated into the data directory on first run (`session-signing-key.pem`, mode 0600) and its
/// public half is published at `/.well-known/jwks.json` under a `kid` derived from the key itself.
struct SessionTokenSigner: Sendable {
    /// How long an access token is valid.
    static let accessTokenLifetime: TimeInterval = 15 * 60
    static let audience = "fitbase"

    let issuer: String
    let keyID: String
    private let keys: JWTKeyCollection
    private let publicKey: ES256PublicKey

    /// Loads the key from `dataDirectory`, creating it on first run.
    static func load(dataDirectory: String, issuer: String) async throws -> SessionTokenSigner {
        let path = URL(fileURLWithPath: dataDirectory).appendingPathComponent("session-signing-key.pem").path
        let key: ES256PrivateKey
        if let pem = FileManager.default.contents(atPath: path) {
            do {
                key = try ES256PrivateKey(pem: String(decoding: pem, as: UTF8.self))
            } catch {
                throw SigningKeyError(path: path, reason: "not a PEM P-256 private key (\(error))")
            }
        } else {
            key = ES256PrivateKey()
            let created = FileManager.default.createFile(
                atPath: path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600]
            )
            guard created else { throw SigningKeyError(path: path, reason: "cannot write the new key") }
        }
        return await SessionTokenSigner(key: key, issuer: issuer)
    }

    init(key: ES256PrivateKey, issuer: String) async {
        let publicKey = key.publicKey
        let parameters = publicKey.parameters
        // RFC 7638-style thumbprint: stable for the key, different for every key.
        let digest = SHA256.hash(data: Data("\(parameters?.x ?? "").\(parameters?.y ?? "")".utf8))
        let keyID = Data(digest.prefix(12)).base64URLEncoded
        self.issuer = issuer
        self.keyID = keyID
        self.publicKey = publicKey
        self.keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
    }

    /// A signed access token for `session` of `user`, and its lifetime in seconds.
    /// - Parameter authenticatedAt: when the user signed in to the session (OIDC `auth_time`); refreshing keeps it.
    func issue(user: UserID, session: SessionID, authenticatedAt: Date, now: Date) async throws -> (token: String, expiresIn: Int) {
        let payload = AccessTokenPayload(
            sub: .init(value: user.description),
            sid: session.description,
            auth_time: Int(authenticatedAt.timeIntervalSince1970),
            iat: .init(value: now),
            exp: .init(value: now.addingTimeInterval(Self.accessTokenLifetime)),
            iss: .init(value: issuer),
            aud: .init(value: [Self.audience])
        )
        let token = try await keys.sign(payload, kid: JWKIdentifier(string: keyID))
        return (token, Int(Self.accessTokenLifetime))
    }

    /// The verified claims of `token`, or a 401 problem saying why it was refused.
    func verify(_ token: String) async throws(Problem) -> AccessClaims {
        let payload: AccessTokenPayload
        do {
            payload = try await keys.verify(token, as: AccessTokenPayload.self)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw .unauthenticated("token_expired", "The access token has expired; refresh the session.")
        } catch {
            throw .unauthenticated("invalid_token", "The access token is not valid.")
        }
        guard payload.iss.value == issuer, payload.aud.value.contains(Self.audience),
            let user = UserID(payload.sub.value), let session = SessionID(payload.sid)
        else {
            throw .unauthenticated("invalid_token", "The access token is not valid.")
        }
        return AccessClaims(
            user: user, session: session, authenticatedAt: Date(timeIntervalSince1970: TimeInterval(payload.auth_time))
        )
    }

    /// The public keys that verify access tokens, as `/.well-known/jwks.json` publishes them.
    func publishedKeys() async -> [Components.Schemas.Jwk] {
        let (x, y) = publicKey.parameters ?? ("", "")
        return [Components.Schemas.Jwk(kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: keyID, x: x, y: y)]
    }
}

/// What a verified access token says.
struct AccessClaims: Sendable, Equatable {
    let user: UserID
    let session: SessionID
    /// When the user signed in to this session (password or provider), not when the token was refreshed.
    let authenticatedAt: Date
}

private struct AccessTokenPayload: JWTPayload {
    var sub: SubjectClaim
    var sid: String
    var auth_time: Int
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    var iss: IssuerClaim
    var aud: AudienceClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// The signing key file cannot be used; reported at start-up.
struct SigningKeyError: Error, CustomStringConvertible {
    let path: String
    let reason: String
    var description: String { "cannot use session signing key \(path) (in --data-dir / FITBASE_DATA_DIR): \(reason)" }
}

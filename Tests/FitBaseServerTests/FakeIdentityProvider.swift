import CryptoExtras
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import NIOCore
import Synchronization
import Testing

@testable import FitBaseServer

/// A local stand-in for Apple's and Google's identity endpoints, speaking their wire formats: a JWKS at
/// `/auth/keys` (Apple) and `/oauth2/v3/certs` (Google), Apple's `/auth/token` and `/auth/revoke` (form-encoded,
/// ES256 client secret checked), and RS256 ID tokens minted with real keys.
final class FakeIdentityProvider: Sendable {
    typealias RSAKey = JWTKit.Insecure.RSA.PrivateKey

    static let appleAudience = "com.example.train"
    static let googleAudience = "1234-test.apps.googleusercontent.com"
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"

    /// Real 2048-bit keys, made once per test run (generation is slow in debug builds).
    static let signingKey = try! JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
    static let rogueKey = try! JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
    /// The Sign in with Apple key (.p8) the server signs client secrets with.
    static let appleClientKey = ES256PrivateKey()

    let baseURL: String
    private let state = Mutex<(exchanged: [String], revoked: [String])>(([], []))

    init(port: Int) {
        self.baseURL = "http://127.0.0.1:\(port)"
    }

    var revokedTokens: [String] { state.withLock { $0.revoked } }
    var exchangedCodes: [String] { state.withLock { $0.exchanged } }

    /// Settings pointing the server at this fake, with the client key written to `directory`.
    func configuration(keyDirectory directory: String) throws -> IdentityProvidersConfiguration {
        let keyFile = directory + "/AuthKey_\(Self.keyID).p8"
        try Self.appleClientKey.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        var configuration = IdentityProvidersConfiguration()
        configuration.appleAudiences = [Self.appleAudience, "com.example.web"]
        configuration.appleJWKSURL = baseURL + "/auth/keys"
        configuration.appleAPIURL = baseURL
        configuration.appleTeamID = Self.teamID
        configuration.appleKeyID = Self.keyID
        configuration.applePrivateKeyFile = keyFile
        configuration.googleAudiences = [Self.googleAudience]
        configuration.googleJWKSURL = baseURL + "/oauth2/v3/certs"
        return configuration
    }

    /// Runs the fake on a real port for the duration of `body`.
    static func run(_ body: @escaping @Sendable (FakeIdentityProvider) async throws -> Void) async throws {
        let box = Mutex<FakeIdentityProvider?>(nil)
        let router = Router()
        router.get("/auth/keys") { _, _ in try jwksResponse() }
        router.get("/oauth2/v3/certs") { _, _ in try jwksResponse() }
        router.post("/auth/token") { request, _ -> Response in
            let form = try await formFields(request)
            guard try await validClientSecret(form), form["grant_type"] == "authorization_code", let code = form["code"], code.hasPrefix("valid-") else {
                return try jsonResponse(["error": "invalid_grant"], status: .badRequest)
            }
            box.withLock { $0?.state.withLock { $0.exchanged.append(code) } }
            return try jsonResponse([
                "access_token": "apple-access", "token_type": "Bearer", "expires_in": 3600,
                "refresh_token": "apple-refresh-\(code)", "id_token": "unused",
            ])
        }
        router.post("/auth/revoke") { request, _ -> Response in
            let form = try await formFields(request)
            guard try await validClientSecret(form), form["token_type_hint"] == "refresh_token", let token = form["token"] else {
                return try jsonResponse(["error": "invalid_client"], status: .badRequest)
            }
            box.withLock { $0?.state.withLock { $0.revoked.append(token) } }
            return Response(status: .ok)
        }
        try await withLiveServer(Application(router: router, logger: TestDatabase.logger)) { _, url in
            let fake = FakeIdentityProvider(port: try #require(url.port))
            box.withLock { $0 = fake }
            try await body(fake)
        }
    }

    // MARK: Minting tokens

    struct Claims: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var exp: Int
        var iat: Int
        var nonce: String?
        var email: String?
        /// Apple sends these as strings ("true"), Google as booleans; both forms must be accepted.
        var email_verified: JSONBool?
        var is_private_email: JSONBool?
        var name: String?
        /// Google Workspace accounts' domain.
        var hd: String? = nil
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    enum JSONBool: Codable, Sendable {
        case string(Bool)
        case bool(Bool)

        init(from decoder: any Decoder) throws { self = .bool(try decoder.singleValueContainer().decode(Bool.self)) }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(String(value))
            case .bool(let value): try container.encode(value)
            }
        }
    }

    /// An Apple identity token for `subject`, valid unless the arguments say otherwise.
    static func appleToken(
        subject: String, rawNonce: String, email: String? = nil, emailVerified: Bool = true, privateEmail: Bool = false,
        issuer: String = "https://appleid.apple.com", audience: String = appleAudience, expiresIn: TimeInterval = 600,
        key: RSAKey = signingKey, kid: String = "fake-apple-1"
    ) async throws -> String {
        let now = Date.now
        let claims = Claims(
            iss: issuer, sub: subject, aud: audience, exp: Int(now.addingTimeInterval(expiresIn).timeIntervalSince1970),
            iat: Int(now.timeIntervalSince1970) - 5, nonce: FitBaseServer.sha256Hex(rawNonce), email: email,
            email_verified: email == nil ? nil : .string(emailVerified), is_private_email: email == nil ? nil : .string(privateEmail)
        )
        return try await sign(claims, key: key, kid: kid)
    }

    /// A Google ID token (booleans as JSON booleans, nonce as given).
    static func googleToken(
        subject: String, email: String, nonce: String?, name: String = "Grace Hopper", hostedDomain: String? = nil, emailVerified: Bool = true
    ) async throws -> String {
        let now = Date.now
        let claims = Claims(
            iss: "https://accounts.google.com", sub: subject, aud: googleAudience,
            exp: Int(now.addingTimeInterval(600).timeIntervalSince1970), iat: Int(now.timeIntervalSince1970),
            nonce: nonce, email: email, email_verified: .bool(emailVerified), is_private_email: nil, name: name, hd: hostedDomain
        )
        return try await sign(claims, key: signingKey, kid: "fake-apple-1")
    }

    /// A server-to-server notification as Apple sends it: the event is JSON inside the `events` string claim.
    static func appleNotification(type: String, subject: String, key: RSAKey = signingKey, issuedAt: Date = .now) async throws -> String {
        struct Notification: JWTPayload {
            let iss: String
            let aud: String
            let iat: Int
            let jti: String
            let events: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let event = #"{"type":"\#(type)","sub":"\#(subject)","email":"relay@privaterelay.appleid.com","is_private_email":"true","event_time":\#(Int(Date.now.timeIntervalSince1970))}"#
        let keys = JWTKeyCollection()
        await keys.add(rsa: key, digestAlgorithm: .sha256, kid: "fake-apple-1")
        return try await keys.sign(
            Notification(iss: "https://appleid.apple.com", aud: appleAudience, iat: Int(issuedAt.timeIntervalSince1970), jti: UUID().uuidString, events: event),
            kid: "fake-apple-1"
        )
    }

    static func sign(_ claims: some JWTPayload, key: RSAKey, kid: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }

    // MARK: Endpoints

    private static func jwksResponse() throws -> Response {
        let (modulus, exponent) = try signingKey.publicKey.getKeyPrimitives()
        return try jsonResponse(["keys": [[
            "kty": "RSA", "kid": "fake-apple-1", "use": "sig", "alg": "RS256",
            "n": modulus.base64URLEncoded, "e": exponent.base64URLEncoded,
        ]]])
    }

    private static func validClientSecret(_ form: [String: String]) async throws -> Bool {
        struct Secret: JWTPayload {
            let iss: String
            let sub: String
            let aud: AudienceClaim
            let exp: ExpirationClaim
            func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
        }
        guard let token = form["client_secret"], let clientID = form["client_id"] else { return false }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: appleClientKey.publicKey, kid: JWKIdentifier(string: keyID))
        guard let secret = try? await keys.verify(token, as: Secret.self) else { return false }
        return secret.iss == teamID && secret.sub == clientID && secret.aud.value == ["https://appleid.apple.com"]
    }

    private static func formFields(_ request: Request) async throws -> [String: String] {
        let body = String(buffer: try await request.body.collect(upTo: 1 << 16))
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    private static func jsonResponse(_ object: Any, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

}

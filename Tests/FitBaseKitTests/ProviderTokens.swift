import CryptoExtras
import FitBaseKit
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import NIOCore
import Testing

@testable import FitBaseServer

/// Apple's and Google's side of a sign-in for the Kit's live tests: their key sets served on a real port (Apple's
/// `/auth/keys`, Google's `/oauth2/v3/certs`), ID tokens signed with a real RSA key, and a server trusting both.
/// (The server's own tests have a fuller stand-in, with Apple's token endpoints; this is what a device's sign-in needs.)
enum ProviderTokens {
    static let appleAudience = "app.fitbase.kit-tests"
    static let googleAudience = "kit-tests.apps.googleusercontent.com"
    static let keyID = "kit-provider-1"
    /// Made once per test run (generation is slow in debug builds).
    static let key = try! Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))

    /// The claims Apple and Google sign; Apple's `nonce` is the hash the request carried, Google's the nonce itself.
    struct Claims: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var exp: Int
        var iat: Int
        var nonce: String?
        var email: String?
        var email_verified: Bool?
        var name: String?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// A token of `issuer` for `audience`, carrying `nonce` as its claim.
    static func token(issuer: String, audience: String, subject: String, email: String, nonce: String, name: String? = nil) async throws -> String {
        let now = Int(Date.now.timeIntervalSince1970)
        let claims = Claims(
            iss: issuer, sub: subject, aud: audience, exp: now + 600, iat: now - 5, nonce: nonce, email: email, email_verified: true, name: name)
        let keys = JWTKeyCollection()
        await keys.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: keyID))
        return try await keys.sign(claims, kid: JWKIdentifier(string: keyID))
    }

    /// Runs `body` with a live server (SQLite) whose Sign in with Apple and Google trust this file's key; Google
    /// tokens must carry a nonce.
    static func withServer(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let router = Router()
        router.get("/auth/keys") { _, _ in try keySet() }
        router.get("/oauth2/v3/certs") { _, _ in try keySet() }
        try await withLiveServer(Application(router: router, logger: TestDatabase.logger)) { _, providers in
            var identity = IdentityProvidersConfiguration()
            identity.appleAudiences = [appleAudience]
            identity.appleJWKSURL = providers.absoluteString + "/auth/keys"
            identity.googleAudiences = [googleAudience]
            identity.googleJWKSURL = providers.absoluteString + "/oauth2/v3/certs"
            identity.googleRequiresNonce = true
            try await TestDatabase.with(.sqlite, migrated: true) { database in
                let app = try await buildApplication(configuration: .testing(database, identityProviders: identity), logger: TestDatabase.logger)
                try await withLiveServer(app) { _, url in try await body(url) }
            }
        }
    }

    private static func keySet() throws -> Response {
        let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
        let set: [String: Any] = [
            "keys": [["kty": "RSA", "kid": keyID, "use": "sig", "alg": "RS256", "n": modulus.base64URLEncoded, "e": exponent.base64URLEncoded]]
        ]
        let data = try JSONSerialization.data(withJSONObject: set)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Apple's sheet as a device shows it, signing the token Apple would: its `nonce` claim is the hashed nonce the request
/// carried. Scripted: authorize as `email`, or the user closes the sheet; the credential state is what the test sets.
actor ScriptedAppleSheet: AppleSignInProvider {
    var email = "apple-\(UUID().uuidString.prefix(8).lowercased())@example.com"
    var userIdentifier = "001234.\(UUID().uuidString.prefix(12))"
    var givenName: String?
    var familyName: String?
    var cancels = false
    var state = AppleCredentialState.authorized
    private(set) var hashedNonces: [String] = []

    func set(cancels: Bool) { self.cancels = cancels }
    func set(state: AppleCredentialState) { self.state = state }
    func set(givenName: String?, familyName: String?) {
        self.givenName = givenName
        self.familyName = familyName
    }

    func requestCredential(hashedNonce: String) async throws(KitError) -> AppleIDAuthorization {
        hashedNonces.append(hashedNonce)
        if cancels { throw .cancelled }
        do {
            let token = try await ProviderTokens.token(
                issuer: "https://appleid.apple.com", audience: ProviderTokens.appleAudience, subject: userIdentifier, email: email, nonce: hashedNonce)
            return AppleIDAuthorization(userIdentifier: userIdentifier, identityToken: token, givenName: givenName, familyName: familyName)
        } catch {
            throw KitError(.server, message: "could not mint: \(error)")
        }
    }

    func credentialState(forUserID userIdentifier: String) async -> AppleCredentialState {
        userIdentifier == self.userIdentifier ? state : .notFound
    }
}

/// Google's SDK as an app fills in ``GoogleSignInProvider``: the ID token's `nonce` claim is the nonce it was given.
actor ScriptedGoogleSignIn: GoogleSignInProvider {
    let email = "google-\(UUID().uuidString.prefix(8).lowercased())@gmail.com"
    private(set) var nonces: [String] = []

    func idToken(nonce: String) async throws(KitError) -> String {
        nonces.append(nonce)
        do {
            return try await ProviderTokens.token(
                issuer: "https://accounts.google.com", audience: ProviderTokens.googleAudience, subject: "google-\(email)", email: email, nonce: nonce,
                name: "Grace Hopper")
        } catch {
            throw KitError(.server, message: "could not mint: \(error)")
        }
    }
}

import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Apple's token endpoints for Sign in with Apple: trading an authorization code for a refresh token, and revoking
/// it when the account is deleted (App Review guideline 5.1.1(v)).
protocol AppleTokenClient: Sendable {
    /// Exchanges `code` (from `ASAuthorizationAppleIDCredential.authorizationCode`) and returns the refresh token.
    func exchange(code: String, clientID: String) async throws -> String
    /// Revokes `refreshToken`, ending the app's access to the Apple ID.
    func revoke(refreshToken: String, clientID: String) async throws
}

/// The team key Apple issued for Sign in with Apple (`FITBASE_APPLE_TEAM_ID`, `FITBASE_APPLE_KEY_ID`,
/// `FITBASE_APPLE_PRIVATE_KEY_FILE`). Client secrets are ES256 JWTs signed with it.
struct AppleClientCredentials: Sendable {
    let teamID: String
    let keyID: String
    let privateKey: ES256PrivateKey
}

extension AppleClientCredentials {
    /// The configured key, or `nil` when none is; an unreadable key file stops start-up naming the setting.
    static func load(_ configuration: IdentityProvidersConfiguration) throws -> AppleClientCredentials? {
        guard let teamID = configuration.appleTeamID, let keyID = configuration.appleKeyID,
            let file = configuration.applePrivateKeyFile
        else { return nil }
        guard let pem = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError(setting: "apple-private-key-file", source: "FITBASE_APPLE_PRIVATE_KEY_FILE", value: file, expected: "a readable .p8 file")
        }
        do {
            return AppleClientCredentials(teamID: teamID, keyID: keyID, privateKey: try ES256PrivateKey(pem: String(decoding: pem, as: UTF8.self)))
        } catch {
            throw ConfigurationError(
                setting: "apple-private-key-file", source: "FITBASE_APPLE_PRIVATE_KEY_FILE", value: file, expected: "a P-256 private key in PEM (.p8)"
            )
        }
    }
}

/// Calls `POST /auth/token` and `POST /auth/revoke` on Apple (or a server speaking the same protocol).
struct HTTPAppleTokenClient: AppleTokenClient {
    static let audience = "https://appleid.apple.com"

    let client: HTTPClient
    let baseURL: String
    let credentials: AppleClientCredentials
    /// When client secrets are issued.
    let clock: ServerClock

    func exchange(code: String, clientID: String) async throws -> String {
        let body = try await post("/auth/token", [
            "client_id": clientID, "client_secret": try await clientSecret(for: clientID, now: clock.now),
            "code": code, "grant_type": "authorization_code",
        ])
        struct TokenResponse: Decodable { let refresh_token: String? }
        guard let token = try JSONDecoder().decode(TokenResponse.self, from: body).refresh_token else {
            throw AppleTokenError(endpoint: "/auth/token", reason: "no refresh_token in the answer", status: 200)
        }
        return token
    }

    func revoke(refreshToken: String, clientID: String) async throws {
        _ = try await post("/auth/revoke", [
            "client_id": clientID, "client_secret": try await clientSecret(for: clientID, now: clock.now),
            "token": refreshToken, "token_type_hint": "refresh_token",
        ])
    }

    /// The ES256 client secret Apple requires: `iss` team, `sub` client id, `aud` Apple, five minutes of validity.
    func clientSecret(for clientID: String, now: Date) async throws -> String {
        struct ClientSecret: JWTPayload {
            let iss: IssuerClaim
            let iat: IssuedAtClaim
            let exp: ExpirationClaim
            let aud: AudienceClaim
            let sub: SubjectClaim
            func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
        }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: credentials.privateKey, kid: JWKIdentifier(string: credentials.keyID))
        return try await keys.sign(
            ClientSecret(
                iss: .init(value: credentials.teamID), iat: .init(value: now), exp: .init(value: now.addingTimeInterval(300)),
                aud: .init(value: [Self.audience]), sub: .init(value: clientID)
            ),
            kid: JWKIdentifier(string: credentials.keyID)
        )
    }

    private func post(_ path: String, _ form: [String: String]) async throws -> Data {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: Self.formEncoded(form)))
        let response = try await client.execute(request, timeout: .seconds(15))
        let body = Data(buffer: try await response.body.collect(upTo: 1 << 20))
        guard response.status == .ok else {
            struct AppleError: Decodable { let error: String? }
            let reason = (try? JSONDecoder().decode(AppleError.self, from: body))?.error ?? "HTTP \(response.status.code)"
            throw AppleTokenError(endpoint: path, reason: reason, status: Int(response.status.code))
        }
        return body
    }

    /// `application/x-www-form-urlencoded`, keys sorted for a stable body.
    static func formEncoded(_ form: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return form.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&")
    }
}

struct AppleTokenError: Error, CustomStringConvertible {
    let endpoint: String
    let reason: String
    /// Apple's HTTP status.
    let status: Int
    var description: String { "Apple \(endpoint) failed: \(reason)" }
    /// Apple refused the request itself (a 4xx other than 429): sending it again cannot succeed.
    var isPermanent: Bool { (400..<500).contains(status) && status != 429 }
}

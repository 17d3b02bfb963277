import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import NIOCore
import Testing

@testable import FitBaseServer

/// The key `app` signs access tokens with, read from its database as an instance does; tests forge tokens with it.
func currentSigningKey(of app: TestApp) async throws -> ES256PrivateKey {
    let keys = SigningKeys(
        store: SigningKeyStore(database: app.database), masterKey: app.foundation.masterKey, legacyKeyFile: nil, logger: TestDatabase.logger
    )
    return try #require(try await keys.liveKeys().first { $0.state == .current }).privateKey
}

extension TestClientProtocol {
    /// Sends `body` as JSON, with a bearer token when given.
    @discardableResult
    func json(
        _ method: HTTPRequest.Method, _ uri: String, body: [String: Any]? = nil, token: String? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        var buffer: ByteBuffer?
        if let body {
            headers[.contentType] = "application/json"
            buffer = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))
        }
        return try await execute(uri: uri, method: method, headers: headers, body: buffer)
    }

    /// Posts an HTML form (`application/x-www-form-urlencoded`), as a browser submits one.
    func submitForm(_ uri: String, _ fields: String) async throws -> TestResponse {
        try await execute(uri: uri, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: fields))
    }

    /// Signs up a new account and signs in to it, as the SDK does (a sign-up opens no session); returns its tokens.
    func signUp(_ email: String = "user-\(UUID().uuidString.prefix(8))@example.com", password: String = "correct horse battery", device: String? = nil) async throws -> TestAccount {
        let response = try await json(.post, "/v1/auth/signup", body: ["email": email, "password": password])
        try #require(response.status == .accepted, "signup answered \(response.status): \(String(buffer: response.body))")
        var body: [String: Any] = ["email": email, "password": password]
        if let device { body["deviceName"] = device }
        let signedIn = try await json(.post, "/v1/auth/signin", body: body)
        try #require(signedIn.status == .ok, "signin after signup answered \(signedIn.status): \(String(buffer: signedIn.body))")
        return try TestAccount(signedIn, email: email, password: password)
    }

    /// Signs in again as `account`, returning a new session's tokens.
    func signIn(_ account: TestAccount, device: String? = nil) async throws -> TestAccount {
        var body: [String: Any] = ["email": account.email, "password": account.password]
        if let device { body["deviceName"] = device }
        let response = try await json(.post, "/v1/auth/signin", body: body)
        try #require(response.status == .ok, "signin answered \(response.status): \(String(buffer: response.body))")
        return try TestAccount(response, email: account.email, password: account.password)
    }
}

/// An account created in a test, with one session's tokens.
struct TestAccount: Sendable {
    let id: String
    let email: String
    let password: String
    let accessToken: String
    let refreshToken: String

    init(_ response: TestResponse, email: String, password: String) throws {
        let body = try json(response)
        let user = try #require(body["user"] as? [String: Any])
        self.id = try #require(user["id"] as? String)
        self.email = email
        self.password = password
        self.accessToken = try #require(body["accessToken"] as? String)
        self.refreshToken = try #require(body["refreshToken"] as? String)
    }
}

import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import NIOCore
import Testing

@testable import FitBaseServer

/// E-mail sign-up and sign-in, session rotation, sign-out and the session list, on every engine.
@Suite struct AccountsTests {
    @Test(arguments: TestEngines.all)
    func signUpNormalisesTheEmailAndSignsIn(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let response = try await client.json(
                .post, "/v1/auth/signup", body: ["email": "  Ana.Lima@Example.COM ", "password": "a long enough secret", "displayName": " Ana "]
            )
            #expect(response.status == .accepted)
            #expect(try json(response)["email"] as? String == "ana.lima@example.com")
            let signIn = try await client.json(.post, "/v1/auth/signin", body: ["email": "ANA.lima@example.com", "password": "a long enough secret"])
            let body = try json(signIn)
            #expect(body["tokenType"] as? String == "Bearer")
            #expect(body["expiresIn"] as? Int == 900)
            let user = try #require(body["user"] as? [String: Any])
            #expect(user["email"] as? String == "ana.lima@example.com")
            #expect(user["displayName"] as? String == "Ana")
            #expect(user["role"] as? String == "user")

            let me = try await client.json(.get, "/v1/me", token: try #require(body["accessToken"] as? String))
            #expect(me.status == .ok)
            #expect(try json(me)["id"] as? String == user["id"] as? String)
        }
    }

    @Test(arguments: TestEngines.all)
    func emailsAreUniqueWhateverTheirCase(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let sam = try await client.signUp("sam@example.com")
            #expect(try await client.json(.post, "/v1/auth/signup", body: ["email": "SAM@example.com", "password": "another fine secret"]).status == .accepted)
            try expectProblem(
                try await client.json(.post, "/v1/auth/signin", body: ["email": "sam@example.com", "password": "another fine secret"]), .invalidCredentials
            )
            #expect(try await client.json(.get, "/v1/me", token: try await client.signIn(sam).accessToken).status == .ok)
        }
    }

    @Test(arguments: [
        ("x@example.com", "short", "password", "min_length"),
        ("x@example.com", String(repeating: "é", count: 40), "password", "max_bytes"),
        ("longpassword@example.com", "LongPassword@example.com", "password", "not_email"),
        ("not an email", "a long enough secret", "email", "valid e-mail"),
    ])
    func passwordPolicyAndEmailProblemsNameTheRule(email: String, password: String, field: String, rule: String) async throws {
        try await withApp(.sqlite) { client, _ in
            let response = try await client.json(.post, "/v1/auth/signup", body: ["email": email, "password": password])
            #expect(response.status == .badRequest)
            let problem = try expectProblem(response, .validationFailed)
            let errors = try #require(problem["errors"] as? [[String: String]])
            #expect(errors.contains { $0["field"] == field && $0["message"]?.contains(rule) == true })
        }
    }

    @Test func missingFieldIsA400NamingIt() async throws {
        try await withApp(.sqlite) { client, _ in
            let response = try await client.json(.post, "/v1/auth/signup", body: ["email": "x@example.com"])
            #expect(response.status == .badRequest)
            let problem = try expectProblem(response, .invalidRequest)
            #expect((problem["errors"] as? [[String: String]])?.first?["field"] == "password")
        }
    }

    @Test func malformedJSONBodyIsA400() async throws {
        try await withApp(.sqlite) { client, _ in
            let response = try await client.execute(
                uri: "/v1/auth/signin", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"email": "#)
            )
            #expect(response.status == .badRequest)
            try expectProblem(response, .malformedJson)
        }
    }

    @Test(arguments: TestEngines.all)
    func wrongPasswordAndUnknownEmailGetTheSameAnswer(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let wrongPassword = try await client.json(.post, "/v1/auth/signin", body: ["email": account.email, "password": "not the password"])
            let unknownEmail = try await client.json(.post, "/v1/auth/signin", body: ["email": "nobody@example.com", "password": account.password])
            #expect(wrongPassword.status == .unauthorized)
            #expect(unknownEmail.status == .unauthorized)
            let first = try expectProblem(wrongPassword, .invalidCredentials)
            let second = try expectProblem(unknownEmail, .invalidCredentials)
            #expect(first["detail"] as? String == second["detail"] as? String)
            _ = try await client.signIn(account)
        }
    }

    @Test(arguments: TestEngines.all)
    func fiveFailuresLockTheAddressWithRetryAfter(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            for _ in 0..<5 {
                let failure = try await client.json(.post, "/v1/auth/signin", body: ["email": account.email, "password": "wrong password!"])
                #expect(failure.status == .unauthorized)
            }
            // Even the right password is refused now, and the answer says when to come back.
            let locked = try await client.json(.post, "/v1/auth/signin", body: ["email": account.email, "password": account.password])
            #expect(locked.status == .tooManyRequests)
            try expectProblem(locked, .tooManyAttempts)
            let retryAfter = try #require(locked.headers[.retryAfter].flatMap(Int.init))
            #expect((1...900).contains(retryAfter))
            // An address without an account is throttled the same way, so the limit reveals nothing.
            for _ in 0..<5 { try await client.json(.post, "/v1/auth/signin", body: ["email": "ghost@example.com", "password": "whatever you like"]) }
            let ghost = try await client.json(.post, "/v1/auth/signin", body: ["email": "ghost@example.com", "password": "whatever you like"])
            #expect(ghost.status == .tooManyRequests)
        }
    }

    @Test(arguments: TestEngines.all)
    func refreshRotatesAndReuseRevokesTheWholeSession(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let rotated = try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": account.refreshToken])
            #expect(rotated.status == .ok)
            let next = try TestAccount(rotated, email: account.email, password: account.password)
            #expect(next.refreshToken != account.refreshToken)
            #expect(try await client.json(.get, "/v1/me", token: next.accessToken).status == .ok)

            // The first token again: theft. The session ends, with every token of it.
            let replay = try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": account.refreshToken])
            #expect(replay.status == .unauthorized)
            try expectProblem(replay, .refreshTokenReused)
            let successor = try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": next.refreshToken])
            try expectProblem(successor, .invalidRefreshToken)
            let me = try await client.json(.get, "/v1/me", token: next.accessToken)
            #expect(me.status == .unauthorized)
            try expectProblem(me, .sessionRevoked)

            // Other sessions of the same account are untouched.
            let other = try await client.signIn(account)
            #expect(try await client.json(.get, "/v1/me", token: other.accessToken).status == .ok)
        }
    }

    @Test func unknownRefreshTokenIsRejected() async throws {
        try await withApp(.sqlite) { client, _ in
            let response = try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": "made-up"])
            #expect(response.status == .unauthorized)
            try expectProblem(response, .invalidRefreshToken)
        }
    }

    @Test(arguments: TestEngines.all)
    func signOutEndsTheSessionAtOnce(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            #expect(try await client.json(.post, "/v1/auth/signout", token: account.accessToken).status == .noContent)
            try expectProblem(try await client.json(.get, "/v1/me", token: account.accessToken), .sessionRevoked)
            try expectProblem(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": account.refreshToken]), .invalidRefreshToken)
        }
    }

    @Test(arguments: TestEngines.all)
    func sessionsAreListedPagedAndEndedOneByOne(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let phone = try await client.signUp(device: "Ana's iPhone")
            let watch = try await client.signIn(phone, device: "Ana's Watch")
            let laptop = try await client.signIn(phone, device: "Web")

            let firstPage = try json(try await client.json(.get, "/v1/me/sessions?limit=2", token: laptop.accessToken))
            let items = try #require(firstPage["items"] as? [[String: Any]])
            #expect(items.count == 2)
            #expect(items.first?["deviceLabel"] as? String == "Web")
            #expect(items.first?["current"] as? Bool == true)
            let cursor = try #require(firstPage["nextCursor"] as? String)
            let secondPage = try json(try await client.json(.get, "/v1/me/sessions?limit=2&cursor=\(cursor)", token: laptop.accessToken))
            let rest = try #require(secondPage["items"] as? [[String: Any]])
            #expect(rest.map { $0["deviceLabel"] as? String } == ["Ana's iPhone"])
            #expect(secondPage["nextCursor"] == nil)

            let watchID = try #require(items.last?["id"] as? String)
            #expect(try await client.json(.delete, "/v1/me/sessions/\(watchID)", token: laptop.accessToken).status == .noContent)
            try expectProblem(try await client.json(.get, "/v1/me", token: watch.accessToken), .sessionRevoked)
            #expect(try await client.json(.delete, "/v1/me/sessions/\(watchID)", token: laptop.accessToken).status == .notFound)
            #expect(try await client.json(.get, "/v1/me/sessions?limit=0", token: laptop.accessToken).status == .badRequest)
            #expect(try await client.json(.get, "/v1/me/sessions?cursor=garbage", token: laptop.accessToken).status == .badRequest)
        }
    }

    @Test func accessTokensAreRefusedWithADistinctCodeForEachFailure() async throws {
        try await withApp(.sqlite) { client, app in
            let account = try await client.signUp()
            let anonymous = try await client.json(.get, "/v1/me")
            #expect(anonymous.headers[.wwwAuthenticate] == "Bearer")
            try expectProblem(anonymous, .authenticationRequired)
            try expectProblem(try await client.json(.get, "/v1/me", token: "not.a.jwt"), .invalidToken)

            let signer = await SessionTokenSigner(key: try await currentSigningKey(of: app), issuer: "http://127.0.0.1:0")
            let claims = try await signer.verify(account.accessToken)
            let expired = try await signer.issue(user: claims.user, session: claims.session, authenticatedAt: .now, now: .now.addingTimeInterval(-3600)).token
            try expectProblem(try await client.json(.get, "/v1/me", token: expired), .tokenExpired)

            let stranger = await SessionTokenSigner(key: ES256PrivateKey(), issuer: "http://127.0.0.1:0")
            let forged = try await stranger.issue(user: claims.user, session: claims.session, authenticatedAt: .now, now: .now).token
            try expectProblem(try await client.json(.get, "/v1/me", token: forged), .invalidToken)

            let parts = account.accessToken.split(separator: ".")
            let unsigned = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64URLEncoded + "." + parts[1] + "."
            try expectProblem(try await client.json(.get, "/v1/me", token: unsigned), .invalidToken)

            let otherIssuer = await SessionTokenSigner(key: try await currentSigningKey(of: app), issuer: "https://elsewhere.example")
            let wrongIssuer = try await otherIssuer.issue(user: claims.user, session: claims.session, authenticatedAt: .now, now: .now).token
            try expectProblem(try await client.json(.get, "/v1/me", token: wrongIssuer), .invalidToken)
        }
    }

    @Test func publishedKeySetVerifiesIssuedTokens() async throws {
        try await withApp(.sqlite) { client, _ in
            let account = try await client.signUp()
            let response = try await client.execute(uri: "/.well-known/jwks.json", method: .get)
            #expect(response.status == .ok)
            let keys = JWTKeyCollection()
            try await keys.add(jwksJSON: String(buffer: response.body))
            struct Claims: JWTPayload {
                var sub: SubjectClaim
                var sid: String
                var exp: ExpirationClaim
                func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
            }
            let claims = try await keys.verify(account.accessToken, as: Claims.self)
            #expect(claims.sub.value == account.id)
        }
    }

    @Test func signingKeyLivesInTheDatabaseAndIsReused() async throws {
        try await withApp(.sqlite) { client, app in
            #expect(!FileManager.default.fileExists(atPath: app.testDatabase.dataDirectory + "/session-signing-key.pem"))
            let account = try await client.signUp()
            try await withApp(on: app.testDatabase) { client, _ async throws in
                #expect(try await client.json(.get, "/v1/me", token: account.accessToken).status == .ok)
            }
        }
    }
}

import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// Sign in with Apple and Google against a local provider speaking their formats, with real RSA keys.
@Suite struct ProviderSignInTests {
    @Test(arguments: TestEngines.all)
    func appleSignInCreatesTheAccountOnceAndKeysItBySubject(engine: DatabaseEngine) async throws {
        try await withProviderApp(engine) { client, fake, _ in
            let token = try await FakeIdentityProvider.appleToken(
                subject: "001234.apple.sub", rawNonce: "nonce-1", email: "x9k2@privaterelay.appleid.com", privateEmail: true
            )
            let first = try await client.json(.post, "/v1/auth/apple", body: [
                "identityToken": token, "rawNonce": "nonce-1", "authorizationCode": "valid-code-1",
                "fullName": ["givenName": "Maya", "familyName": "Lima"], "deviceName": "Maya's iPhone",
            ])
            #expect(first.status == .ok)
            let body = try json(first)
            #expect(body["isNewUser"] as? Bool == true)
            let user = try #require(body["user"] as? [String: Any])
            #expect(user["displayName"] as? String == "Maya Lima")
            #expect(user["email"] as? String == "x9k2@privaterelay.appleid.com")
            #expect(user["emailIsPrivateRelay"] as? Bool == true)
            #expect(user["signInMethods"] as? [String] == ["apple"])
            #expect(fake.exchangedCodes == ["valid-code-1"])

            let again = try json(try await client.json(.post, "/v1/auth/apple", body: [
                "identityToken": try await FakeIdentityProvider.appleToken(subject: "001234.apple.sub", rawNonce: "nonce-2"),
                "rawNonce": "nonce-2",
            ]))
            #expect(again["isNewUser"] as? Bool == false)
            #expect((again["user"] as? [String: Any])?["id"] as? String == user["id"] as? String)
            #expect((again["user"] as? [String: Any])?["displayName"] as? String == "Maya Lima")
        }
    }

    @Test func everyKindOfBadIdentityTokenHasItsOwnCode() async throws {
        try await withProviderApp(.sqlite) { client, _, _ in
            let sub = "bad.tokens.sub"
            let valid = try await FakeIdentityProvider.appleToken(subject: sub, rawNonce: "n")
            let parts = valid.split(separator: ".").map(String.init)
            let otherPayload = try await FakeIdentityProvider.appleToken(subject: "someone.else", rawNonce: "n").split(separator: ".")[1]
            let unsignedHeader = Data(#"{"alg":"none","kid":"fake-apple-1"}"#.utf8).base64URLEncoded

            let cases: [(String, String, ProblemCode)] = [
                ("wrong audience", try await FakeIdentityProvider.appleToken(subject: sub, rawNonce: "n", audience: "com.attacker.app"), .identityTokenWrongAudience),
                ("wrong issuer", try await FakeIdentityProvider.appleToken(subject: sub, rawNonce: "n", issuer: "https://evil.example"), .identityTokenWrongIssuer),
                ("expired", try await FakeIdentityProvider.appleToken(subject: sub, rawNonce: "n", expiresIn: -120), .identityTokenExpired),
                ("unknown kid", try await FakeIdentityProvider.appleToken(subject: sub, rawNonce: "n", key: FakeIdentityProvider.rogueKey, kid: "rogue-7"), .identityTokenUnknownKey),
                ("tampered", parts[0] + "." + otherPayload + "." + parts[2], .identityTokenBadSignature),
                ("alg none", unsignedHeader + "." + parts[1] + ".", .identityTokenUnsupportedAlgorithm),
                ("not a JWT", "garbage", .identityTokenMalformed),
            ]
            var codes: Set<ProblemCode> = []
            for (name, token, code) in cases {
                let response = try await client.json(.post, "/v1/auth/apple", body: ["identityToken": token, "rawNonce": "n"])
                #expect(response.status == .unauthorized, "\(name)")
                #expect(ProblemCode(rawValue: try json(response)["code"] as? String ?? "") == code, "\(name)")
                codes.insert(code)
            }
            let badNonce = try await client.json(.post, "/v1/auth/apple", body: ["identityToken": valid, "rawNonce": "not-n"])
            #expect(badNonce.status == .unauthorized)
            codes.insert(try #require(ProblemCode(rawValue: try json(badNonce)["code"] as? String ?? "")))
            #expect(codes.count == cases.count + 1)
            // The valid token still works: none of the above created or damaged anything.
            #expect(try await client.json(.post, "/v1/auth/apple", body: ["identityToken": valid, "rawNonce": "n"]).status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func deletingAnAppleAccountRevokesAppleTokenThroughTheOutbox(engine: DatabaseEngine) async throws {
        try await withProviderApp(engine) { client, fake, _ in
            let token = try await FakeIdentityProvider.appleToken(subject: "to.delete", rawNonce: "n")
            let session = try json(try await client.json(.post, "/v1/auth/apple", body: [
                "identityToken": token, "rawNonce": "n", "authorizationCode": "valid-code-delete",
            ]))
            let accessToken = try #require(session["accessToken"] as? String)
            #expect(try await client.json(.delete, "/v1/me", token: accessToken).status == .noContent)
            // Revoked at Apple by the outbox, after the deletion committed.
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while fake.revokedTokens.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(fake.revokedTokens == ["apple-refresh-valid-code-delete"])
            try expectProblem(try await client.json(.get, "/v1/me", token: accessToken), .sessionRevoked)
        }
    }

    @Test(arguments: TestEngines.all)
    func appleNotificationsEndSessionsUpdateTheRelayAndDeleteAccounts(engine: DatabaseEngine) async throws {
        try await withProviderApp(engine) { client, _, _ in
            func signIn(_ sub: String) async throws -> [String: Any] {
                let nonce = UUID().uuidString
                let token = try await FakeIdentityProvider.appleToken(
                    subject: sub, rawNonce: nonce, email: "\(sub)@privaterelay.appleid.com", privateEmail: true
                )
                return try json(try await client.json(.post, "/v1/auth/apple", body: ["identityToken": token, "rawNonce": nonce]))
            }
            func notify(_ type: String, _ sub: String) async throws -> TestResponse {
                try await client.json(.post, "/v1/auth/apple/notifications", body: ["payload": try await FakeIdentityProvider.appleNotification(type: type, subject: sub)])
            }

            let revoked = try await signIn("apple.revoked")
            #expect(try await notify("consent-revoked", "apple.revoked").status == .ok)
            #expect(try await notify("consent-revoked", "apple.revoked").status == .ok)
            try expectProblem(try await client.json(.get, "/v1/me", token: try #require(revoked["accessToken"] as? String)), .sessionRevoked)

            let deleted = try await signIn("apple.deleted")
            #expect(try await notify("account-delete", "apple.deleted").status == .ok)
            #expect(try await notify("account-delete", "apple.deleted").status == .ok)
            try expectProblem(try await client.json(.get, "/v1/me", token: try #require(deleted["accessToken"] as? String)), .sessionRevoked)
            #expect(try await signIn("apple.deleted")["isNewUser"] as? Bool == true)

            let relay = try await signIn("apple.relay")
            #expect(try await notify("email-disabled", "apple.relay").status == .ok)
            let export = try json(try await client.json(.get, "/v1/me/export", token: try #require(relay["accessToken"] as? String)))
            let identity = try #require(((export["sections"] as? [String: Any])?["signInIdentities"] as? [[String: Any]])?.first)
            #expect(identity["provider"] as? String == "apple")
            #expect(identity["emailRelayEnabled"] as? Bool == false)

            #expect(try await notify("email-enabled", "nobody.we.know").status == .ok)
            let forged = try await FakeIdentityProvider.appleNotification(type: "account-delete", subject: "apple.relay", key: FakeIdentityProvider.rogueKey)
            let refused = try await client.json(.post, "/v1/auth/apple/notifications", body: ["payload": forged])
            #expect(refused.status == .unauthorized)
            #expect(try await client.json(.get, "/v1/me", token: try #require(relay["accessToken"] as? String)).status == .ok)
        }
    }

    @Test func providersThatAreNotConfiguredSayso() async throws {
        try await withApp(.sqlite) { client, _ in
            let response = try await client.json(.post, "/v1/auth/google", body: ["idToken": "x"])
            #expect(response.status == .serviceUnavailable)
            try expectProblem(response, .providerNotConfigured)
        }
    }
}

/// The app configured against a running ``FakeIdentityProvider`` and the test billing chain, with what else `options` sets.
func withProviderApp(
    _ engine: DatabaseEngine, options: TestAppOptions = .init(),
    _ test: @escaping @Sendable (any TestClientProtocol, FakeIdentityProvider, TestApp) async throws -> Void
) async throws {
    try await FakeIdentityProvider.run { fake in
        let keyDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-keys-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: keyDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: keyDirectory) }
        var options = options
        options.identityProviders = try fake.configuration(keyDirectory: keyDirectory)
        options.billing = try BillingFixture.configuration()
        try await withApp(engine, options: options) { client, app in try await test(client, fake, app) }
    }
}

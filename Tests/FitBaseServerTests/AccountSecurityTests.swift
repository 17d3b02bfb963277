import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// The attacks accounts part 2 closes: takeover through an unverified address, raced and owner-locking throttles,
/// unbounded hashing, replayed Apple notifications.
@Suite struct AccountSecurityTests {
    // MARK: Takeover through an unverified address

    @Test(arguments: TestEngines.all)
    func anAttackersPreRegisteredPasswordDiesWhenTheOwnerSignsInWithGoogle(engine: DatabaseEngine) async throws {
        try await withProviderApp(engine) { client, _, _ in
            // The attacker signs up with the victim's address (never verified) and keeps two sessions.
            let attacker = try await client.signUp("victim@gmail.com", password: "attacker's password")
            let attackerTablet = try await client.signIn(attacker, device: "attacker's tablet")
            // The owner signs in with Google, which vouches for the address.
            let token = try await FakeIdentityProvider.googleToken(subject: "google-victim", email: "Victim@Gmail.com", nonce: nil)
            let owner = try await client.json(.post, "/v1/auth/google", body: ["idToken": token])
            #expect(owner.status == .ok)
            let user = try #require(try json(owner)["user"] as? [String: Any])
            #expect(user["signInMethods"] as? [String] == ["google"])
            #expect(user["emailVerified"] as? Bool == true)
            // Every way back in for the attacker is gone.
            for session in [attacker, attackerTablet] {
                try expectProblem(try await client.json(.get, "/v1/me", token: session.accessToken), .sessionRevoked)
                try expectProblem(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": session.refreshToken]), .invalidRefreshToken)
            }
            try expectProblem(
                try await client.json(.post, "/v1/auth/signin", body: ["email": "victim@gmail.com", "password": "attacker's password"]),
                .invalidCredentials
            )
            // The owner's session works.
            let ownerToken = try #require(try json(owner)["accessToken"] as? String)
            #expect(try await client.json(.get, "/v1/me", token: ownerToken).status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func anAttackersPreRegisteredPasswordDiesWhenTheOwnerSignsInWithApple(engine: DatabaseEngine) async throws {
        try await withProviderApp(engine) { client, _, _ in
            let attacker = try await client.signUp("maya@example.com", password: "attacker's password")
            let token = try await FakeIdentityProvider.appleToken(subject: "apple.maya", rawNonce: "n", email: "maya@example.com")
            let owner = try await client.json(.post, "/v1/auth/apple", body: ["identityToken": token, "rawNonce": "n"])
            #expect(owner.status == .ok)
            #expect((try json(owner)["user"] as? [String: Any])?["signInMethods"] as? [String] == ["apple"])
            try expectProblem(try await client.json(.get, "/v1/me", token: attacker.accessToken), .sessionRevoked)
            try expectProblem(
                try await client.json(.post, "/v1/auth/signin", body: ["email": "maya@example.com", "password": "attacker's password"]),
                .invalidCredentials
            )
        }
    }

    // MARK: Throttling

    @Test(arguments: TestEngines.all)
    func twentyConcurrentWrongPasswordsAreRefusedAfterTheFifth(engine: DatabaseEngine) async throws {
        // Enough hashing slots for the five admitted guesses to be checked at once: what is counted here is the
        // throttle, not the hasher's own bound (a 503 `busy`, tested below).
        try await withApp(engine, options: .init(mailer: RecordingMailer(), configure: { $0.accounts = AccountsConfiguration(passwordHashSlots: 8) })) { client, _ in
            let owner = try await client.signUp("target@example.com")
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for guess in 0..<20 {
                    group.addTask {
                        try await client.json(.post, "/v1/auth/signin", body: ["email": "target@example.com", "password": "guess number \(guess)"]).status
                    }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .unauthorized }.count == 5)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 15)
            // Even the right password waits now — unless it comes from a device the owner signed in on before.
            let locked = try await client.json(.post, "/v1/auth/signin", body: ["email": "target@example.com", "password": owner.password])
            try expectProblem(locked, .tooManyAttempts)
            #expect(Int(locked.headers[.retryAfter] ?? "") ?? 0 > 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func someoneWhoKnowsOnlyTheAddressCannotLockTheOwnersDeviceOut(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(mailer: RecordingMailer())) { client, _ in
            let owner = try await client.json(.post, "/v1/auth/signin", body: ["email": try await client.signUp("owner@example.com").email, "password": "correct horse battery"])
            let deviceToken = try #require(try json(owner)["deviceToken"] as? String)
            for guess in 0..<8 {
                _ = try await client.json(.post, "/v1/auth/signin", body: ["email": "owner@example.com", "password": "attacker guess \(guess)"])
            }
            try expectProblem(try await client.json(.post, "/v1/auth/signin", body: ["email": "owner@example.com", "password": "correct horse battery"]), .tooManyAttempts)
            let fromDevice = try await client.json(.post, "/v1/auth/signin", body: [
                "email": "owner@example.com", "password": "correct horse battery", "deviceToken": deviceToken,
            ])
            #expect(fromDevice.status == .ok)
            #expect(try json(fromDevice)["deviceToken"] as? String == deviceToken)
            // A device token is no skeleton key: it belongs to its account, and has its own limit.
            let stranger = try await client.json(.post, "/v1/auth/signin", body: ["email": try await client.signUp("stranger@example.com").email, "password": "correct horse battery"])
            let strangerDevice = try #require(try json(stranger)["deviceToken"] as? String)
            try expectProblem(try await client.json(.post, "/v1/auth/signin", body: [
                "email": "owner@example.com", "password": "correct horse battery", "deviceToken": strangerDevice,
            ]), .tooManyAttempts)
            for guess in 0..<5 {
                _ = try await client.json(.post, "/v1/auth/signin", body: ["email": "owner@example.com", "password": "wrong \(guess)", "deviceToken": deviceToken])
            }
            try expectProblem(try await client.json(.post, "/v1/auth/signin", body: [
                "email": "owner@example.com", "password": "correct horse battery", "deviceToken": deviceToken,
            ]), .tooManyAttempts)
        }
    }

    @Test func attemptsAreCountedPerClientAddressBehindATrustedProxy() async throws {
        try await withApp(.sqlite, options: .init(live: true, mailer: RecordingMailer(), configure: { $0.accounts = AccountsConfiguration(trustedProxies: ["127.0.0.1"]) })) { client, app in
            func signIn(_ email: String, from address: String) async throws -> HTTPResponse.Status {
                try await client.execute(
                    uri: "/v1/auth/signin", method: .post,
                    headers: [.contentType: "application/json", .xForwardedFor: "203.0.113.9, \(address)"],
                    body: ByteBuffer(string: #"{"email":"\#(email)","password":"not it at all"}"#)
                ).status
            }
            // 30 failures on 30 addresses from one client: the 31st attempt from it is refused…
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<30 { statuses.append(try await signIn("spray-\(index)@example.com", from: "198.51.100.7")) }
            #expect(statuses.allSatisfy { $0 == .unauthorized })
            let refused = try await signIn("spray-30@example.com", from: "198.51.100.7")
            #expect(refused == .tooManyRequests)
            // …while another client is not.
            let other = try await signIn("spray-30@example.com", from: "198.51.100.8")
            #expect(other == .unauthorized)
        }
    }

    @Test func aBurstOfSignInsOnMadeUpAddressesGetsBusyInsteadOfWaiting() async throws {
        try await withApp(.sqlite, options: .init(mailer: RecordingMailer(), configure: {
            $0.accounts = AccountsConfiguration(passwordHashSlots: 1)
            $0.bcryptCost = 10
        })) { client, _ in
            let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for index in 0..<12 {
                    group.addTask {
                        let response = try await client.json(.post, "/v1/auth/signin", body: ["email": "made-up-\(index)@example.com", "password": "whatever it is"])
                        return (response.status, response.headers[.retryAfter])
                    }
                }
                return try await group.reduce(into: [(HTTPResponse.Status, String?)]()) { $0.append($1) }
            }
            let busy = statuses.filter { $0.0 == .serviceUnavailable }
            #expect(!busy.isEmpty)
            #expect(busy.allSatisfy { $0.1 == "1" })
            #expect(statuses.allSatisfy { $0.0 == .serviceUnavailable || $0.0 == .unauthorized })
        }
    }

    @Test func theHasherAdmitsNoMoreThanItsSlots() async throws {
        let hasher = PasswordHasher(cost: 10, threadCount: 1, slots: 2)
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await hasher.hash("correct horse battery")
                        return true
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.contains(true))
        #expect(outcomes.contains(false))
    }

    // MARK: Apple notifications

    @Test(arguments: TestEngines.all)
    func replayedAppleNotificationsDoNothing(engine: DatabaseEngine) async throws {
        let clock = MovableClock()
        var options = TestAppOptions()
        options.clock = clock.serverClock
        try await withProviderApp(engine, options: options) { client, _, app in
            func signIn() async throws -> String {
                let nonce = UUID().uuidString
                let token = try await FakeIdentityProvider.appleToken(subject: "apple.replay", rawNonce: nonce)
                return try #require(try json(try await client.json(.post, "/v1/auth/apple", body: ["identityToken": token, "rawNonce": nonce]))["accessToken"] as? String)
            }
            func send(_ payload: String) async throws -> HTTPResponse.Status {
                try await client.json(.post, "/v1/auth/apple/notifications", body: ["payload": payload]).status
            }
            // consent-revoked, captured and replayed after the user signed in again: the new session lives.
            let first = try await signIn()
            let revoke = try await FakeIdentityProvider.appleNotification(type: "consent-revoked", subject: "apple.replay")
            #expect(try await send(revoke) == .ok)
            try expectProblem(try await client.json(.get, "/v1/me", token: first), .sessionRevoked)
            let second = try await signIn()
            #expect(try await send(revoke) == .ok)
            #expect(try await client.json(.get, "/v1/me", token: second).status == .ok)

            // account-delete, captured; the person registers again with the same Apple ID; the replay deletes nothing,
            // even once the receipt is gone, because it was issued before the new identity was linked.
            let delete = try await FakeIdentityProvider.appleNotification(type: "account-delete", subject: "apple.replay")
            #expect(try await send(delete) == .ok)
            try expectProblem(try await client.json(.get, "/v1/me", token: second), .sessionRevoked)
            // The Apple ID is linked again later than the notification was issued (it names whole seconds).
            clock.advance(by: 2.2)
            let reborn = try await signIn()
            #expect(try await send(delete) == .ok)
            try await app.database.transaction { db in try await db.delete(from: "apple_notification_receipts").run() }
            #expect(try await send(delete) == .ok)
            #expect(try await client.json(.get, "/v1/me", token: reborn).status == .ok)

            // A notification issued two hours ago is acknowledged and ignored.
            let stale = try await FakeIdentityProvider.appleNotification(type: "consent-revoked", subject: "apple.replay", issuedAt: .now.addingTimeInterval(-7200))
            #expect(try await send(stale) == .ok)
            #expect(try await client.json(.get, "/v1/me", token: reborn).status == .ok)
        }
    }
}

import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// The pre-hijack of accounts part 3: an attacker registers the victim's address with a password, a mail scanner
/// "opens" the link, and the owner later signs in with a provider. Each test plays the attack over HTTP.
@Suite struct PreHijackTests {
    @Test(arguments: TestEngines.all)
    func aScannedLinkAndAProviderSignInLeaveTheAttackerNothing(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withProviderApp(engine, options: .init(mailer: mailer)) { client, _, _ in
            // The attacker signs up with the victim's corporate address and registers a phone for pushes.
            let attacker = try await client.signUp("victim@corp.example", password: "attacker's password")
            #expect(try await client.json(.put, "/v1/me/devices/\(deviceToken())", body: [
                "platform": "ios", "environment": "production", "bundleId": "com.example.fit",
            ], token: attacker.accessToken).status == .created)
            // The company's mail scanner follows the link in the verification e-mail.
            let token = try await mailer.token(to: "victim@corp.example", subject: "Confirm")
            #expect(try await client.execute(uri: "/auth/verify?token=\(token)", method: .get).status == .ok)
            #expect(try json(try await client.json(.get, "/v1/me", token: attacker.accessToken))["emailVerified"] as? Bool == false)

            // The owner taps "Sign in with Google" (a Workspace account: Google answers for the address).
            let google = try await FakeIdentityProvider.googleToken(
                subject: "google-victim", email: "victim@corp.example", nonce: "n-1", hostedDomain: "corp.example"
            )
            let owner = try await client.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "n-1"])
            #expect(owner.status == .ok)
            let body = try json(owner)
            // The address was never verified: the attacker's account is gone and the owner's is new.
            #expect(body["linked"] as? String == "created")
            #expect((body["user"] as? [String: Any])?["id"] as? String != attacker.id)
            #expect((body["user"] as? [String: Any])?["signInMethods"] as? [String] == ["google"])
            #expect((body["user"] as? [String: Any])?["emailVerified"] as? Bool == true)

            // Nothing the attacker held works: sessions, refresh tokens, the password, the registered phone.
            try expectProblem(try await client.json(.get, "/v1/me", token: attacker.accessToken), .sessionRevoked)
            try expectProblem(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": attacker.refreshToken]), .invalidRefreshToken)
            try expectProblem(
                try await client.json(.post, "/v1/auth/signin", body: ["email": "victim@corp.example", "password": "attacker's password"]),
                .invalidCredentials
            )
            let ownerToken = try #require(body["accessToken"] as? String)
            let devices = try json(try await client.json(.get, "/v1/me/devices", token: ownerToken))
            #expect((devices["items"] as? [Any])?.isEmpty == true)
            // The address is told.
            let notice = try #require(try await mailer.message(to: "victim@corp.example", subject: "now signs in with Google"))
            #expect(notice.text.contains("never confirmed"))
        }
    }

    /// Issue 53: a join used to keep what the pre-registrant set up, so the attacker's other account saw the owner in
    /// its group (members, leaderboard, photo) and the owner's account carried the attacker's consents and profile.
    @Test(arguments: TestEngines.all)
    func anOwnersProviderSignInLeavesNothingThePreRegistrantSetUp(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withProviderApp(engine, options: .init(mailer: mailer)) { client, _, app in
            try await CatalogImporter.importCatalog(([CatalogTests.fixture[0]], []), into: app.database, now: .storageNow)
            let workout = CatalogTests.fixture[0].id.description
            // The attacker registers the victim's address and sets the account up: a group (with a second account of
            // the attacker's in it, and an invite out), a name, a photo, consents, preferences, a phone for pushes.
            let squatter = try await client.signUp("victim@example.com", password: "attacker's password")
            let accomplice = try await client.signUp()
            #expect(try await client.json(.patch, "/v1/me", body: ["displayName": "Victim", "fitnessLevel": "beginner"], token: squatter.accessToken).status == .ok)
            let groupID = try #require(try json(try await GroupTests.create(client, squatter, "Victim's crew"))["id"] as? String)
            let invite = try #require(try await GroupTests.invite(client, squatter, groupID)["token"] as? String)
            #expect(try await client.json(.post, "/v1/invites/\(invite)/accept", token: accomplice.accessToken).status == .ok)
            let spare = try #require(try await GroupTests.invite(client, squatter, groupID)["token"] as? String)
            #expect(try await ProfilePhotoTests.upload(client, TestImages.jpeg(), token: squatter.accessToken).status == .ok)
            #expect(try await client.json(.post, "/v1/me/consents", body: ["kind": "analytics", "version": "2026-01", "granted": true], token: squatter.accessToken).status == .created)
            #expect(try await client.json(.put, "/v1/me/devices/\(deviceToken())", body: [
                "platform": "ios", "environment": "production", "bundleId": "com.example.fit",
            ], token: squatter.accessToken).status == .created)
            try await ChallengeTests.log(client, squatter, workout)
            #expect(ChallengeTests.standings(try await ChallengeTests.board(client, accomplice, groupID))[squatter.id] != nil)

            // The victim signs in with Apple, which vouches for the address, and works out.
            let apple = try await FakeIdentityProvider.appleToken(subject: "apple-victim", rawNonce: "v-1", email: "victim@example.com")
            let answer = try json(try await client.json(.post, "/v1/auth/apple", body: ["identityToken": apple, "rawNonce": "v-1"]))
            let victimToken = try #require(answer["accessToken"] as? String)
            let victimID = try #require((answer["user"] as? [String: Any])?["id"] as? String)
            #expect(answer["linked"] as? String == "created")
            #expect(victimID != squatter.id)
            #expect(try await client.json(.post, "/v1/history", body: [
                "workoutId": workout, "completedAt": Date.now.addingTimeInterval(-60).formatted(.iso8601), "duration": 30,
            ], token: victimToken).status == .created)

            // The attacker's other account sees the victim nowhere: not among the members (it is the admin now, alone),
            // not on the leaderboard, not behind a photo link; the invite the pre-registrant sent is void.
            let group = try json(try await client.json(.get, "/v1/groups/\(groupID)", token: accomplice.accessToken))
            #expect(group["memberCount"] as? Int == 1 && group["role"] as? String == "admin")
            let members = try #require(try json(try await client.json(.get, "/v1/groups/\(groupID)/members", token: accomplice.accessToken))["items"] as? [[String: Any]])
            #expect(members.map { $0["userId"] as? String } == [accomplice.id])
            let standings = ChallengeTests.standings(try await ChallengeTests.board(client, accomplice, groupID))
            #expect(standings[victimID] == nil && standings[squatter.id] == nil)
            for user in [victimID, squatter.id] {
                #expect(try await client.json(.get, "/v1/users/\(user)/photo", token: accomplice.accessToken).status == .notFound)
            }
            #expect(try await client.json(.get, "/v1/invites/\(spare)", token: try await client.signUp().accessToken).status == .notFound)

            // The victim's account holds nothing of the attacker's.
            let me = try json(try await client.json(.get, "/v1/me", token: victimToken))
            #expect(me["displayName"] as? String != "Victim" && me["fitnessLevel"] == nil && me["currentGroupId"] == nil)
            #expect(me["emailVerified"] as? Bool == true)
            let consents = try json(try await client.json(.get, "/v1/me/consents", token: victimToken))
            #expect((consents["items"] as? [Any])?.isEmpty == true)
            let devices = try json(try await client.json(.get, "/v1/me/devices", token: victimToken))
            #expect((devices["items"] as? [Any])?.isEmpty == true)
            #expect(try await client.json(.get, "/v1/users/\(victimID)/photo", token: victimToken).status == .notFound)
            // Nor is anything left of the pre-registrant's account: its rows and photo objects are deleted.
            #expect(try await ProfilePhotoTests.objects(of: squatter.id, in: app).isEmpty)
            let squatterID = try #require(UUID(uuidString: squatter.id))
            let left = try await app.database.withConnection { db in
                try await db.select().column("id").from("users").where("id", .equal, squatterID).all().count
            }
            #expect(left == 0)
            #expect(try await mailer.message(to: "victim@example.com", subject: "now signs in with Apple") != nil)
        }
    }

    @Test(arguments: TestEngines.all)
    func aVerifiedAccountWithAPasswordLosesItWhenAProviderJoins(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withProviderApp(engine, options: .init(mailer: mailer)) { client, _, _ in
            let account = try await client.signUp("grace@gmail.com")
            let token = try await mailer.token(to: "grace@gmail.com", subject: "Confirm")
            #expect(try await client.submitForm("/auth/verify", "token=\(token)").status == .ok)
            #expect(try await client.json(.post, "/v1/me/email", body: ["newEmail": "grace.new@example.com", "password": account.password], token: account.accessToken).status == .accepted)
            let pending = try await mailer.token(to: "grace.new@example.com", subject: "new")

            let google = try await FakeIdentityProvider.googleToken(subject: "google-42", email: "Grace@Gmail.com", nonce: "g-nonce")
            let joined = try json(try await client.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "g-nonce"]))
            #expect(joined["linked"] as? String == "joined")
            #expect(joined["isNewUser"] as? Bool == false)
            let user = try #require(joined["user"] as? [String: Any])
            #expect(user["id"] as? String == account.id)
            #expect(user["signInMethods"] as? [String] == ["google"])
            try expectProblem(try await client.json(.get, "/v1/me", token: account.accessToken), .sessionRevoked)
            try expectProblem(try await client.json(.post, "/v1/auth/signin", body: ["email": "grace@gmail.com", "password": account.password]), .invalidCredentials)
            // The e-mail change the password's holder asked for is void.
            try expectProblem(try await client.json(.post, "/v1/auth/email/verify", body: ["token": pending]), .tokenInvalid)
            #expect(try await mailer.message(to: "grace@gmail.com", subject: "Google sign-in was added") != nil)

            // Later sign-ins say nothing about linking.
            let again = try await FakeIdentityProvider.googleToken(subject: "google-42", email: "grace@gmail.com", nonce: "g-nonce-2")
            let later = try json(try await client.json(.post, "/v1/auth/google", body: ["idToken": again, "nonce": "g-nonce-2"]))
            #expect(later["linked"] == nil)
            #expect((later["user"] as? [String: Any])?["id"] as? String == account.id)
        }
    }

    @Test(arguments: TestEngines.all)
    func anAccountWithoutAPasswordIsJoinedAndKeepsItsSessions(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withProviderApp(engine, options: .init(mailer: mailer)) { client, _, _ in
            let apple = try await FakeIdentityProvider.appleToken(subject: "apple.hu", rawNonce: "a-1", email: "hu@gmail.com")
            let first = try json(try await client.json(.post, "/v1/auth/apple", body: ["identityToken": apple, "rawNonce": "a-1"]))
            #expect(first["linked"] as? String == "created")
            let appleSession = try #require(first["accessToken"] as? String)
            let google = try await FakeIdentityProvider.googleToken(subject: "google-hu", email: "hu@gmail.com", nonce: "g-1")
            let second = try json(try await client.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "g-1"]))
            #expect(second["linked"] as? String == "joined")
            #expect((second["user"] as? [String: Any])?["signInMethods"] as? [String] == ["apple", "google"])
            #expect(try await client.json(.get, "/v1/me", token: appleSession).status == .ok)
            let notice = try #require(try await mailer.message(to: "hu@gmail.com", subject: "Google sign-in was added"))
            #expect(!notice.text.contains("password was removed"))
        }
    }

    @Test(arguments: TestEngines.all)
    func googlesWordCountsOnlyForAddressesGoogleAnswersFor(engine: DatabaseEngine) async throws {
        try await withProviderApp(engine, options: .init(mailer: RecordingMailer())) { client, _, _ in
            // Someone else registered the address; a consumer Google account that once confirmed it shows up.
            let holder = try await client.signUp("ana@example.org")
            let google = try await FakeIdentityProvider.googleToken(subject: "google-ana", email: "ana@example.org", nonce: "g-2")
            let answer = try json(try await client.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "g-2"]))
            #expect(answer["linked"] as? String == "created")
            let user = try #require(answer["user"] as? [String: Any])
            #expect(user["id"] as? String != holder.id)
            #expect(user["emailVerified"] as? Bool != true)
            // The holder's account is untouched.
            #expect(try await client.json(.get, "/v1/me", token: holder.accessToken).status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func aScannedEmailChangeLinkDoesNotMoveTheAttackersAccountOntoTheVictimsAddress(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withProviderApp(engine, options: .init(mailer: mailer)) { client, _, _ in
            let attacker = try await client.signUp("mallory@evil.example")
            #expect(try await client.json(.post, "/v1/me/email", body: ["newEmail": "victim@gmail.com", "password": attacker.password], token: attacker.accessToken).status == .accepted)
            let token = try await mailer.token(to: "victim@gmail.com", subject: "new")
            #expect(try await client.execute(uri: "/auth/verify?token=\(token)", method: .get).status == .ok)
            #expect(try json(try await client.json(.get, "/v1/me", token: attacker.accessToken))["email"] as? String == "mallory@evil.example")
            // The victim's Google sign-in gets an account of its own.
            let google = try await FakeIdentityProvider.googleToken(subject: "google-victim-2", email: "victim@gmail.com", nonce: "g-3")
            let answer = try json(try await client.json(.post, "/v1/auth/google", body: ["idToken": google, "nonce": "g-3"]))
            #expect(answer["linked"] as? String == "created")
            #expect((answer["user"] as? [String: Any])?["id"] as? String != attacker.id)
        }
    }

    @Test func emailsCarryNoTextAUserWrote() async throws {
        let mailer = RecordingMailer()
        try await withApp(.sqlite, options: .init(mailer: mailer)) { client, _ in
            let spam = "Win a prize at https://spam.example"
            #expect(try await client.json(.post, "/v1/auth/signup", body: [
                "email": "target@example.com", "password": "correct horse battery", "displayName": spam,
            ]).status == .accepted)
            let message = try #require(try await mailer.received(by: "target@example.com").first)
            #expect(!message.text.contains("spam.example"))
            #expect(!message.html.contains("spam.example"))
        }
    }
}

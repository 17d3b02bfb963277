import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// Issue 53: a sign-up answered 409 `email_taken` for an address with an account, before any limit — whether an
/// address has an account could be asked 1,200 times a minute. A sign-up now answers alike either way, after the same
/// limits and the same password hashing, and the address's owner is told by e-mail instead.
@Suite struct SignUpEnumerationTests {
    @Test(arguments: TestEngines.all)
    func aSignUpDoesNotTellWhetherTheAddressHasAnAccount(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, app in
            let owner = try await client.signUp("owner@example.com")
            let taken = try await client.json(.post, "/v1/auth/signup", body: ["email": "Owner@Example.com", "password": "someone else's guess"])
            let free = try await client.json(.post, "/v1/auth/signup", body: ["email": "free@example.com", "password": "someone else's guess"])
            #expect(taken.status == .accepted && free.status == .accepted)
            #expect(taken.headers[.contentType] == free.headers[.contentType])
            let (takenBody, freeBody) = (try json(taken), try json(free))
            #expect(Set(takenBody.keys) == Set(freeBody.keys))
            #expect(takenBody["email"] as? String == "owner@example.com" && freeBody["email"] as? String == "free@example.com")

            // The owner is told, by e-mail only, and holds no link from it; the account is untouched.
            let notice = try #require(try await mailer.message(to: "owner@example.com", subject: "tried to create"))
            #expect(!notice.text.contains("token="))
            #expect(try await client.json(.get, "/v1/me", token: owner.accessToken).status == .ok)
            _ = try await client.signIn(owner)
            try expectProblem(
                try await client.json(.post, "/v1/auth/signin", body: ["email": "owner@example.com", "password": "someone else's guess"]),
                .invalidCredentials
            )
            let holders = try await app.database.withConnection { db in
                try await db.select().column("id").from("users").where("email", .equal, "owner@example.com").all().count
            }
            #expect(holders == 1)
            // The free address got an account and its verification link.
            #expect(try await mailer.message(to: "free@example.com", subject: "Confirm") != nil)
        }
    }

    @Test(arguments: TestEngines.all)
    func aTakenAddressCountsAgainstTheSameLimitsAsAFreeOne(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, _ in
            // The owner's own sign-up is the mailbox's first e-mail of the hour; two more sign-ups are answered…
            _ = try await client.signUp("held@example.com")
            for attempt in 0..<2 {
                let response = try await client.json(.post, "/v1/auth/signup", body: ["email": "held@example.com", "password": "guess number \(attempt)"])
                #expect(response.status == .accepted)
            }
            // …and the fourth is refused as a free address's fourth is: the mailbox gets no more than three.
            try expectProblem(
                try await client.json(.post, "/v1/auth/signup", body: ["email": "held@example.com", "password": "guess number 3"]), .tooManyAttempts
            )
            #expect(try await mailer.received(by: "held@example.com", atLeast: 3).count == 3)
        }
    }
}

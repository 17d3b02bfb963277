import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// E-mail verification, password reset and change, and e-mail change, with the e-mail read from a recording mailer.
@Suite struct EmailCredentialsTests {
    @Test(arguments: TestEngines.all)
    func signUpSendsAVerificationLinkThatWorksOnce(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, app in
            let account = try await client.signUp("ana@example.com")
            var me = try json(try await client.json(.get, "/v1/me", token: account.accessToken))
            #expect(me["emailVerified"] as? Bool == false)
            #expect(me["lastSignInAt"] as? String != nil)
            let message = try #require(try await mailer.received(by: "ana@example.com").first)
            #expect(message.subject.contains("Confirm your e-mail address"))
            #expect(message.html.contains("<a href=\"http://127.0.0.1:0/auth/verify?token="))
            let token = try await mailer.token(to: "ana@example.com", subject: "Confirm")

            let verified = try await client.json(.post, "/v1/auth/email/verify", body: ["token": token])
            #expect(verified.status == .ok)
            #expect(try json(verified)["purpose"] as? String == "verifyEmail")
            me = try json(try await client.json(.get, "/v1/me", token: account.accessToken))
            #expect(me["emailVerified"] as? Bool == true)
            try expectProblem(try await client.json(.post, "/v1/auth/email/verify", body: ["token": token]), .tokenUsed)
            try expectProblem(try await client.json(.post, "/v1/auth/email/verify", body: ["token": "made-up"]), .tokenInvalid)
            try expectProblem(try await client.json(.post, "/v1/auth/email/verification", token: account.accessToken), .emailAlreadyVerified)
        }
    }

    @Test(arguments: TestEngines.all)
    func verificationLinksExpireAndTheResentOneReplacesThem(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, app in
            let account = try await client.signUp("bo@example.com")
            let first = try await mailer.token(to: "bo@example.com", subject: "Confirm")
            #expect(try await client.json(.post, "/v1/auth/email/verification", token: account.accessToken).status == .accepted)
            _ = try await mailer.received(by: "bo@example.com", atLeast: 2)
            let second = try await mailer.token(to: "bo@example.com", subject: "Confirm")
            #expect(first != second)
            try expectProblem(try await client.json(.post, "/v1/auth/email/verify", body: ["token": first]), .tokenInvalid)
            try await app.database.transaction { db in
                try await db.update("account_tokens").set("expires_at", to: Date.now.addingTimeInterval(-1)).run()
            }
            try expectProblem(try await client.json(.post, "/v1/auth/email/verify", body: ["token": second]), .tokenExpired)
            // The page says so too, as HTML.
            let page = try await client.execute(uri: "/auth/verify?token=\(second)", method: .get)
            #expect(page.status == .badRequest)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.headers[.referrerPolicy] == "no-referrer")
            #expect(String(buffer: page.body).contains("expired"))
            // Three verification e-mails an hour per mailbox, the sign-up's included: a third resend is one too many.
            #expect(try await client.json(.post, "/v1/auth/email/verification", token: account.accessToken).status == .accepted)
            let limited = try await client.json(.post, "/v1/auth/email/verification", token: account.accessToken)
            try expectProblem(limited, .tooManyAttempts)
            #expect(limited.headers[.retryAfter] != nil)
        }
    }

    @Test(arguments: TestEngines.all)
    func openingTheVerificationLinkOnlyShowsAConfirmButton(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, _ in
            let account = try await client.signUp("cy@example.com")
            let token = try await mailer.token(to: "cy@example.com", subject: "Confirm")
            // A mail scanner, a link preview and a prefetch all GET the link: none of them proves the address.
            for _ in 0..<3 {
                let page = try await client.execute(uri: "/auth/verify?token=\(token)", method: .get)
                #expect(page.status == .ok)
                #expect(page.headers[.cacheControl] == "no-store")
                #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                let html = String(buffer: page.body)
                #expect(html.contains("Confirm cy@example.com as the e-mail address of your FitBase account?"))
                #expect(html.contains(#"<form method="post" action="/auth/verify">"#))
                #expect(html.contains(#"name="token" value="\#(token)""#))
            }
            #expect(try json(try await client.json(.get, "/v1/me", token: account.accessToken))["emailVerified"] as? Bool == false)
            // The person presses the button.
            let confirmed = try await client.submitForm("/auth/verify", "token=\(token)")
            #expect(confirmed.status == .ok)
            #expect(String(buffer: confirmed.body).contains("cy@example.com is verified"))
            #expect(try json(try await client.json(.get, "/v1/me", token: account.accessToken))["emailVerified"] as? Bool == true)
            let again = try await client.submitForm("/auth/verify", "token=\(token)")
            #expect(again.status == .badRequest)
            #expect(String(buffer: again.body).contains("already used"))
        }
    }

    @Test(arguments: TestEngines.all)
    func openingAnEmailChangeLinkChangesNothingUntilConfirmed(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, _ in
            let account = try await client.signUp("ida@example.com")
            #expect(try await client.json(.post, "/v1/me/email", body: ["newEmail": "ida.new@example.com", "password": account.password], token: account.accessToken).status == .accepted)
            let token = try await mailer.token(to: "ida.new@example.com", subject: "new")
            let page = try await client.execute(uri: "/auth/verify?token=\(token)", method: .get)
            #expect(String(buffer: page.body).contains("Make ida.new@example.com the e-mail address of your FitBase account?"))
            #expect(try json(try await client.json(.get, "/v1/me", token: account.accessToken))["email"] as? String == "ida@example.com")
            #expect(try await client.submitForm("/auth/verify", "token=\(token)").status == .ok)
            #expect(try json(try await client.json(.get, "/v1/me", token: account.accessToken))["email"] as? String == "ida.new@example.com")
        }
    }

    @Test func everyOutcomeOfTheLinkPagesIsAPage() async throws {
        try await withApp(.sqlite, options: .init(mailer: RecordingMailer())) { client, _ in
            let requests: [(String, TestResponse)] = [
                ("GET /auth/verify without a token", try await client.execute(uri: "/auth/verify", method: .get)),
                ("GET /auth/verify with an empty token", try await client.execute(uri: "/auth/verify?token=", method: .get)),
                ("GET /auth/verify with a made-up token", try await client.execute(uri: "/auth/verify?token=%00%ff", method: .get)),
                ("POST /auth/verify without a token", try await client.submitForm("/auth/verify", "")),
                ("POST /auth/verify with garbage", try await client.submitForm("/auth/verify", "token=%%%")),
                ("GET /auth/reset without a token", try await client.execute(uri: "/auth/reset", method: .get)),
                ("GET /auth/reset with a made-up token", try await client.execute(uri: "/auth/reset?token=nope", method: .get)),
                ("POST /auth/reset without fields", try await client.submitForm("/auth/reset", "")),
                ("POST /auth/reset without a password", try await client.submitForm("/auth/reset", "token=nope")),
            ]
            for (name, response) in requests {
                #expect(response.status == .badRequest, "\(name)")
                #expect(response.headers[.contentType]?.hasPrefix("text/html") == true, "\(name): \(response.headers[.contentType] ?? "")")
                #expect(String(buffer: response.body).contains("This link"), "\(name)")
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func forgotPasswordAnswersTheSameForKnownAndUnknownAddresses(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, _ in
            _ = try await client.signUp("known@example.com")
            let known = try await client.json(.post, "/v1/auth/password/forgot", body: ["email": "known@example.com"])
            let unknown = try await client.json(.post, "/v1/auth/password/forgot", body: ["email": "nobody@example.com"])
            #expect(known.status == .accepted)
            #expect(unknown.status == .accepted)
            #expect(known.body == unknown.body)
            let shape: (TestResponse) -> [String] = { response in
                response.headers.filter { $0.name != .requestID && $0.name != .date }.map { "\($0.name)=\($0.value)" }.sorted()
            }
            #expect(shape(known) == shape(unknown))
            #expect(try await mailer.message(to: "known@example.com", subject: "Reset") != nil)
            try await Task.sleep(for: .milliseconds(200))
            #expect(mailer.messages.allSatisfy { $0.to != "nobody@example.com" })
            // Limited per address, known or not.
            for _ in 0..<2 { _ = try await client.json(.post, "/v1/auth/password/forgot", body: ["email": "nobody@example.com"]) }
            try expectProblem(try await client.json(.post, "/v1/auth/password/forgot", body: ["email": "nobody@example.com"]), .tooManyAttempts)
        }
    }

    @Test(arguments: TestEngines.all)
    func resetSetsThePasswordEndsEverySessionAndWorksOnce(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, _ in
            let account = try await client.signUp("dee@example.com")
            let other = try await client.signIn(account, device: "iPad")
            #expect(try await client.json(.post, "/v1/auth/password/forgot", body: ["email": "dee@example.com"]).status == .accepted)
            let token = try await mailer.token(to: "dee@example.com", subject: "Reset")

            let weak = try await client.json(.post, "/v1/auth/password/reset", body: ["token": token, "newPassword": "short"])
            #expect(try expectProblem(weak, .validationFailed)["errors"] != nil)
            let reset = try await client.json(.post, "/v1/auth/password/reset", body: ["token": token, "newPassword": "a brand new passphrase"])
            #expect(reset.status == .noContent)
            try expectProblem(try await client.json(.post, "/v1/auth/password/reset", body: ["token": token, "newPassword": "yet another passphrase"]), .tokenUsed)

            for session in [account, other] {
                try expectProblem(try await client.json(.get, "/v1/me", token: session.accessToken), .sessionRevoked)
                try expectProblem(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": session.refreshToken]), .invalidRefreshToken)
            }
            try expectProblem(try await client.json(.post, "/v1/auth/signin", body: ["email": "dee@example.com", "password": account.password]), .invalidCredentials)
            let signedIn = try await client.json(.post, "/v1/auth/signin", body: ["email": "dee@example.com", "password": "a brand new passphrase"])
            #expect(signedIn.status == .ok)
            // The link proved the address.
            #expect((try json(signedIn)["user"] as? [String: Any])?["emailVerified"] as? Bool == true)
            #expect(try await mailer.message(to: "dee@example.com", subject: "password was changed") != nil)
        }
    }

    @Test(arguments: TestEngines.all)
    func linksSentBeforeAPasswordChangeAreUseless(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, app in
            let account = try await client.signUp("eve@example.com")
            let verification = try await mailer.token(to: "eve@example.com", subject: "Confirm")
            #expect(try await client.json(.post, "/v1/auth/password/forgot", body: ["email": "eve@example.com"]).status == .accepted)
            let reset = try await mailer.token(to: "eve@example.com", subject: "Reset")
            let other = try await client.signIn(account)

            let wrong = try await client.json(.post, "/v1/me/password", body: ["currentPassword": "not the password", "newPassword": "another long secret"], token: account.accessToken)
            try expectProblem(wrong, .wrongPassword)
            let changed = try await client.json(.post, "/v1/me/password", body: ["currentPassword": account.password, "newPassword": "another long secret"], token: account.accessToken)
            #expect(changed.status == .noContent)
            // This session stays; the other one ends.
            #expect(try await client.json(.get, "/v1/me", token: account.accessToken).status == .ok)
            try expectProblem(try await client.json(.get, "/v1/me", token: other.accessToken), .sessionRevoked)

            try expectProblem(try await client.json(.post, "/v1/auth/password/reset", body: ["token": reset, "newPassword": "attacker's choice 123"]), .tokenInvalid)
            try expectProblem(try await client.json(.post, "/v1/auth/email/verify", body: ["token": verification]), .tokenInvalid)
        }
    }

    @Test(arguments: TestEngines.all)
    func resetTokensExpireAfterThirtyMinutes(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, app in
            _ = try await client.signUp("fay@example.com")
            _ = try await client.json(.post, "/v1/auth/password/forgot", body: ["email": "fay@example.com"])
            let token = try await mailer.token(to: "fay@example.com", subject: "Reset")
            try await app.database.transaction { db in
                try await db.update("account_tokens").set("expires_at", to: Date.now.addingTimeInterval(-1))
                    .where("purpose", .equal, "reset-password").run()
            }
            try expectProblem(try await client.json(.post, "/v1/auth/password/reset", body: ["token": token, "newPassword": "a brand new passphrase"]), .tokenExpired)
        }
    }

    @Test(arguments: TestEngines.all)
    func theResetPageShowsAFormAndSetsThePassword(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, _ in
            let account = try await client.signUp("gus@example.com")
            _ = try await client.json(.post, "/v1/auth/password/forgot", body: ["email": "gus@example.com"])
            let token = try await mailer.token(to: "gus@example.com", subject: "Reset")
            let form = try await client.execute(uri: "/auth/reset?token=\(token)", method: .get)
            #expect(form.status == .ok)
            #expect(String(buffer: form.body).contains(#"<form method="post" action="/auth/reset">"#))
            #expect(String(buffer: form.body).contains("gus@example.com"))

            func submit(_ fields: String) async throws -> TestResponse { try await client.submitForm("/auth/reset", fields) }
            let mismatch = try await submit("token=\(token)&newPassword=first+long+secret&confirmPassword=second+long+secret")
            #expect(mismatch.status == .badRequest)
            #expect(String(buffer: mismatch.body).contains("differ"))
            let done = try await submit("token=\(token)&newPassword=first+long+secret&confirmPassword=first+long+secret")
            #expect(done.status == .ok)
            #expect(String(buffer: done.body).contains("Password changed"))
            try expectProblem(try await client.json(.get, "/v1/me", token: account.accessToken), .sessionRevoked)
            #expect(try await client.json(.post, "/v1/auth/signin", body: ["email": "gus@example.com", "password": "first long secret"]).status == .ok)
            #expect(try await submit("token=\(token)&newPassword=x&confirmPassword=x").status == .badRequest)
        }
    }

    @Test(arguments: TestEngines.all)
    func anEmailChangeTakesEffectWhenTheNewAddressConfirmsIt(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, _ in
            let account = try await client.signUp("hal@example.com")
            _ = try await client.signUp("taken@example.com")
            try expectProblem(
                try await client.json(.post, "/v1/me/email", body: ["newEmail": "new-hal@example.com", "password": "wrong password!"], token: account.accessToken),
                .wrongPassword
            )
            try expectProblem(
                try await client.json(.post, "/v1/me/email", body: ["newEmail": "taken@example.com", "password": account.password], token: account.accessToken),
                .emailTaken
            )
            let asked = try await client.json(.post, "/v1/me/email", body: ["newEmail": " New-Hal@Example.com ", "password": account.password], token: account.accessToken)
            #expect(asked.status == .accepted)
            #expect(try json(asked)["pendingEmail"] as? String == "new-hal@example.com")
            // Nothing changes until the new address confirms.
            #expect(try json(try await client.json(.get, "/v1/me", token: account.accessToken))["email"] as? String == "hal@example.com")
            let token = try await mailer.token(to: "new-hal@example.com", subject: "new")
            let confirmed = try await client.json(.post, "/v1/auth/email/verify", body: ["token": token])
            #expect(try json(confirmed)["purpose"] as? String == "changeEmail")
            let me = try json(try await client.json(.get, "/v1/me", token: account.accessToken))
            #expect(me["email"] as? String == "new-hal@example.com")
            #expect(me["emailVerified"] as? Bool == true)
            #expect(try await mailer.message(to: "hal@example.com", subject: "address was changed")?.text.contains("new-hal@example.com") == true)
            #expect(try await client.json(.post, "/v1/auth/signin", body: ["email": "new-hal@example.com", "password": account.password]).status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func anSMTPOutageDuringSignUpLosesNoMessageAndSendsItOnce(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, app in
            mailer.setFailing(true)
            _ = try await client.signUp("ivy@example.com")
            // The worker tried and failed; the message waits in the outbox.
            let deadline = ContinuousClock.now.advanced(by: .seconds(30))
            while mailer.refusals == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(mailer.refusals >= 1)
            #expect(mailer.messages.isEmpty)
            // Let the worker record the failure (and release its claim) before another instance looks.
            try await app.testDatabase.waitForAFailedDelivery()
            mailer.setFailing(false)
            // Another instance's worker, later (past any backoff the first may have reached meanwhile), sends it.
            let masterKey = try MasterKey.load(for: .testing(app.testDatabase))
            let (delivered, again) = try await app.testDatabase.withStorage { opened in
                let worker = OutboxWorker(
                    database: opened, outbox: Outbox(masterKey: masterKey, signal: WakeSignal()), mailer: mailer, sender: "FitBase <no-reply@localhost>",
                    appleTokens: nil, logger: TestDatabase.logger
                )
                return (
                    try await worker.deliverDueJobs(now: Date.storageNow.addingTimeInterval(5_000)),
                    try await worker.deliverDueJobs(now: Date.storageNow.addingTimeInterval(10_000))
                )
            }
            #expect(delivered == 1)
            #expect(again == 0)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await mailer.received(by: "ivy@example.com").count == 1)
        }
    }
}

extension TestDatabase {
    /// Waits (up to 30 s) until the outbox holds a job whose delivery failed and whose claim was released.
    func waitForAFailedDelivery() async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while ContinuousClock.now < deadline {
            let settled = try await withStorage { database in
                try await database.withConnection { db in
                    try await db.select().column("id").from("outbox").where("status", .equal, "pending")
                        .where("attempts", .greaterThanOrEqual, 1).where("claimed_until", .is, SQLLiteral.null).first() != nil
                }
            }
            if settled { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Runs `body` with a pool of its own on this database (another instance, say), closed whatever happens.
    func withStorage<Result: Sendable>(_ body: (Database) async throws -> Result) async throws -> Result {
        let database = try await Database.open(location, logger: TestDatabase.logger)
        do {
            let result = try await body(database)
            try await database.shutdown()
            return result
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}

/// The outbox with the real SMTP client: the server refuses while sign-up happens, the message waits, and is
/// delivered exactly once when a server takes it.
@Suite struct OutboxSMTPTests {
    @Test(arguments: TestEngines.all)
    func aSignUpDuringAnSMTPOutageIsDeliveredOnceTheServerIsBack(engine: DatabaseEngine) async throws {
        let down = try await FakeSMTPServer.start(.init(faults: [.greeting: .reply("421 4.3.2 Service not available")]))
        let up = try await FakeSMTPServer.start()
        let failing = SMTPConfiguration(host: "127.0.0.1", port: down.port, security: .none, credentials: nil, sender: "FitBase <no-reply@fitbase.test>")
        let working = SMTPConfiguration(host: "127.0.0.1", port: up.port, security: .none, credentials: nil, sender: "FitBase <no-reply@fitbase.test>")
        try await withApp(engine, options: .init(configure: { $0.accounts.smtp = failing })) { client, app in
            _ = try await client.signUp("outage@example.com")
            // The refusing server answers the greeting with 421, so the client never says EHLO: wait on the job instead.
            try await app.testDatabase.waitForAFailedDelivery()
            #expect(down.messages.isEmpty)
            // Another instance, configured with the server that is back, delivers it after the backoff.
            let masterKey = app.foundation.masterKey
            let (delivered, again) = try await app.testDatabase.withStorage { opened in
                let worker = OutboxWorker(
                    database: opened, outbox: Outbox(masterKey: masterKey, signal: WakeSignal()),
                    mailer: SMTPMailer(configuration: working, clock: .system), sender: "FitBase <no-reply@fitbase.test>", appleTokens: nil,
                    logger: TestDatabase.logger
                )
                // Past any backoff the failing instance may have reached meanwhile (at most an hour, +20 %). The failing
                // instance may hold the job for an attempt of its own at that moment (claims skip locked jobs):
                // then it is asked again once that attempt has ended.
                var delivered = 0
                let deadline = ContinuousClock.now.advanced(by: .seconds(20))
                repeat {
                    delivered += try await worker.deliverDueJobs(now: Date.storageNow.addingTimeInterval(5_000))
                    if delivered == 0 { try await Task.sleep(for: .milliseconds(100)) }
                } while delivered == 0 && ContinuousClock.now < deadline
                return (delivered, try await worker.deliverDueJobs(now: Date.storageNow.addingTimeInterval(10_000)))
            }
            #expect(delivered == 1)
            #expect(again == 0)
            #expect(up.messages.count == 1)
            #expect(up.messages.first?.recipients == ["outage@example.com"])
            #expect(up.messages.first?.content.contains("Subject: Confirm your e-mail address") == true)
        }
        try await down.stop()
        try await up.stop()
    }
}

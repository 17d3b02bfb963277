import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// The operator's console over HTTP, as a browser uses it: cookies, forms and their CSRF tokens.
@Suite struct ConsoleTests {
    @Test(arguments: TestEngines.all)
    func anAdministratorSignsInWithASecureCookieAndEveryPageAnswers(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (admin, _) = try await Self.admin(client, app)
            let page = try await client.execute(uri: "/console/signin", method: .get)
            #expect(page.status == .ok)
            let signInCookie = try #require(Self.cookie("fitbase_console_signin", in: page))
            let token = try #require(Self.csrf(in: page))
            let signedIn = try await client.execute(
                uri: "/console/signin", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "fitbase_console_signin=\(signInCookie)", HTTPField.Name("X-Forwarded-Proto")!: "https"],
                body: ByteBuffer(string: "csrf=\(token)&email=\(Self.encoded(admin.email))&password=\(Self.encoded(admin.password))")
            )
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/console")
            let setCookie = try #require(signedIn.headers[values: .setCookie].first { $0.hasPrefix("fitbase_console=") })
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Secure") && setCookie.contains("Path=/console"))
            let session = try #require(Self.cookie("fitbase_console", in: signedIn))
            for path in ["/console", "/console/users", "/console/catalog", "/console/catalog/new", "/console/catalog/import", "/console/groups", "/console/deliveries", "/console/system"] {
                let response = try await client.execute(uri: path, method: .get, headers: [.cookie: "fitbase_console=\(session)"])
                #expect(response.status == .ok, "\(path) answered \(response.status)")
                #expect(response.headers[.contentType] == "text/html; charset=utf-8" && response.headers[.cacheControl] == "no-store")
                #expect(String(buffer: response.body).contains("name=\"csrf\""), "\(path) has no sign-out form with its token")
            }
            let css = try await client.execute(uri: "/console/assets/console.css", method: .get)
            #expect(css.status == .ok && String(buffer: css.body).contains(":focus-visible"))
            // Without https, no Secure flag (the browser would drop the cookie).
            let plain = try await Self.signIn(client, email: admin.email, password: admin.password)
            #expect(plain.headers[values: .setCookie].first { $0.hasPrefix("fitbase_console=") }?.contains("Secure") == false)
        }
    }

    /// The dashboard's product-analytics panel counts what the analytics ingest stored, per event.
    @Test(arguments: TestEngines.all)
    func theDashboardCountsProductEvents(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let user = try await client.signUp()
            try await AnalyticsTests.consent(client, user.accessToken)
            let events = [AnalyticsTests.event("paywall_viewed"), AnalyticsTests.event("paywall_viewed"), AnalyticsTests.event("workout_started")]
            #expect(try await AnalyticsTests.send(client, user.accessToken, events).status.code / 100 == 2)
            let (_, session) = try await Self.admin(client, app)
            let page = String(buffer: try await Self.get(client, "/console", session).body)
            #expect(!page.contains("not connected"))
            let row = try #require(page.components(separatedBy: "<tr>").first { $0.contains(">paywall_viewed<") })
            #expect(row.contains(">2</td>"), "the paywall row counts both events: \(row)")
            #expect(page.contains(">workout_started<"))
        }
    }

    @Test(arguments: TestEngines.all)
    func anonymousVisitorsAreSentToSignInAndNonAdministratorsGet403(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            for path in ["/console", "/console/users", "/console/system"] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .seeOther && response.headers[.location] == "/console/signin")
            }
            let forged = try await client.execute(uri: "/console", method: .get, headers: [.cookie: "fitbase_console=not-a-session"])
            #expect(forged.status == .seeOther)
            let anonymousPost = try await client.execute(uri: "/console/system/audit-verify", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: "csrf=x"))
            #expect(anonymousPost.status == .seeOther && anonymousPost.headers[.location] == "/console/signin")

            let user = try await client.signUp()
            let refused = try await Self.signIn(client, email: user.email, password: user.password)
            #expect(refused.status == .forbidden)
            #expect(!refused.headers[values: .setCookie].contains { $0.hasPrefix("fitbase_console=") && !$0.hasPrefix("fitbase_console=;") })
            #expect(String(buffer: refused.body).contains("not an administrator"))

            // An administrator demoted while signed in is refused at the next request.
            let (admin, session) = try await Self.admin(client, app)
            #expect(try await Self.get(client, "/console", session).status == .ok)
            try await UserStore(database: app.database).setRole(.user, for: try #require(UserID(admin.id)), now: .storageNow)
            #expect(try await Self.get(client, "/console", session).status == .forbidden)
        }
    }

    @Test(arguments: TestEngines.all)
    func aWrongPasswordIsRefusedAndCountedByTheAPIsThrottle(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (admin, _) = try await Self.admin(client, app)
            for _ in 0..<4 {
                #expect(try await Self.signIn(client, email: admin.email, password: "wrong password!").status == .unauthorized)
            }
            // The API's attempts and the console's share one allowance per address (5 per 15 minutes).
            let api = try await client.json(.post, "/v1/auth/signin", body: ["email": admin.email, "password": "wrong password!"])
            #expect(api.status == .unauthorized)
            let limited = try await Self.signIn(client, email: admin.email, password: admin.password)
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil)
            #expect(String(buffer: limited.body).contains("Too many sign-in attempts"))
        }
    }

    @Test(arguments: TestEngines.all)
    func aFormWithoutItsSessionsTokenChangesNothing(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (_, session) = try await Self.admin(client, app)
            let user = try await client.signUp()
            let page = try await Self.get(client, "/console/users/\(user.id)", session)
            let token = try #require(Self.csrf(in: page))
            for body in ["tier=premium", "tier=premium&csrf=", "tier=premium&csrf=\(token.dropLast())x"] {
                let refused = try await Self.post(client, "/console/users/\(user.id)/tier", session, body)
                #expect(refused.status == .forbidden)
                #expect(String(buffer: refused.body).contains("security token"))
            }
            #expect(try await Self.tier(client, user) == "free")
            let granted = try await Self.post(client, "/console/users/\(user.id)/tier", session, "tier=premium&days=30&csrf=\(token)")
            #expect(granted.status == .seeOther && granted.headers[.location] == "/console/users/\(user.id)?granted=premium")
            let after = String(buffer: try await Self.get(client, "/console/users/\(user.id)?granted=premium", session).body)
            #expect(after.contains("Granted premium") && after.contains("<td>promotional</td><td>promotional.premium</td><td>premium</td>"))
            #expect(try await Self.tier(client, user) == "premium")
            // The sign-in form has its own token, checked the same way.
            let noToken = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "email=a%40example.com&password=x")
            )
            #expect(noToken.status == .forbidden)
            let trail = try await OperatorAuditTrail.recent(limit: 10, target: user.id, in: app.database)
            #expect(trail.filter { $0.action == OperatorAuditTrail.Action.tierGranted.rawValue }.count == 1)
        }
    }

    /// A session revoked in the console ends for the API at its next request, on every instance sharing the database.
    @Test(arguments: TestEngines.all)
    func aSessionRevokedInTheConsoleIsRefusedByTheAPIOnEveryInstance(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            let masterKey = SharedKeysTests.randomMasterKey()
            try await SharedKeysTests.withDataDirectories(1) { directories in
                try await withApp(on: testDatabase, options: .instance(testDatabase.dataDirectory, masterKey: masterKey)) { a, appA async throws in
                    try await withApp(on: testDatabase, options: .instance(directories[0], masterKey: masterKey)) { b, _ async throws in
                        let user = try await b.signUp()
                        let phone = try await b.signIn(user, device: "Phone")
                        #expect(try await b.json(.get, "/v1/me", token: phone.accessToken).status == .ok)
                        let sessionID = try #require(Self.sessionID(of: phone.accessToken))

                        let (_, session) = try await Self.admin(a, appA)
                        let page = try await Self.get(a, "/console/users/\(user.id)", session)
                        #expect(String(buffer: page.body).contains(sessionID))
                        let revoked = try await Self.post(a, "/console/users/\(user.id)/sessions/\(sessionID)/revoke", session, "csrf=\(try #require(Self.csrf(in: page)))")
                        #expect(revoked.status == .seeOther && revoked.headers[.location] == "/console/users/\(user.id)?revoked=\(sessionID)")

                        let refused = try await b.json(.get, "/v1/me", token: phone.accessToken)
                        #expect(refused.status == .unauthorized)
                        #expect(try json(refused)["code"] as? String == "session_revoked")
                        #expect(try await b.json(.get, "/v1/me", token: user.accessToken).status == .ok)
                        let again = try await Self.post(a, "/console/users/\(user.id)/sessions/\(sessionID)/revoke", session, "csrf=\(try #require(Self.csrf(in: page)))")
                        #expect(again.status == .notFound)
                    }
                }
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func openingAUserIsAuditedAndShowsNoHealthOrCycleValue(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (admin, session) = try await Self.admin(client, app)
            let user = try await client.signUp()
            try await HealthTests.consent(client, user.accessToken)
            let uploaded = try await HealthTests.upload(client, user.accessToken, [
                HealthTests.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 61.73, "unit": "count/min"]),
            ])
            #expect(uploaded.status == .ok)
            #expect(try json(uploaded)["created"] as? Int == 1)
            let period = try await client.json(.post, "/v1/cycle/periods", body: [
                "startDate": "2026-11-01", "endDate": "2026-11-05", "flow": "heavy", "symptoms": ["cramps"], "notes": "zq7-private-note",
            ], token: user.accessToken)
            #expect(period.status == .created)

            let page = try await Self.get(client, "/console/users/\(user.id)", session)
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains(user.email.lowercased()))
            for secret in ["61.73", "61.7", "zq7-private-note", "heavy", "cramps", "2026-11-01"] {
                #expect(!html.contains(secret), "the user page shows \(secret)")
            }
            let trail = try await OperatorAuditTrail.recent(limit: 10, target: user.id, in: app.database)
            let opened = try #require(trail.first { $0.action == OperatorAuditTrail.Action.userOpened.rawValue })
            #expect(opened.admin.description == admin.id && opened.adminEmail == admin.email.lowercased() && opened.targetKind == "user")
            let system = String(buffer: try await Self.get(client, "/console/system", session).body)
            #expect(system.contains("user.opened") && system.contains("user \(user.id)"))
        }
    }

    @Test(arguments: TestEngines.all)
    func aCatalogFileWithABadRecordShowsTheErrorNextToItAndImportsNothing(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (_, session) = try await Self.admin(client, app)
            let page = try await Self.get(client, "/console/catalog/import", session)
            let token = try #require(Self.csrf(in: page))
            let good = Self.workoutRecord(id: UUID(), title: "Morning Flow Console", intensity: "low")
            let bad = Self.workoutRecord(id: UUID(), title: "Broken Burner", intensity: "extreme")
            let file = String(decoding: try JSONSerialization.data(withJSONObject: ["workouts": [good, bad], "programs": []]), as: UTF8.self)
            let boundary = "----fitbase\(UUID().uuidString.prefix(8))"
            let body = "--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(token)\r\n"
                + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"catalog.json\"\r\nContent-Type: application/json\r\n\r\n\(file)\r\n"
                + "--\(boundary)\r\nContent-Disposition: form-data; name=\"catalog\"\r\n\r\n\r\n--\(boundary)--\r\n"
            let refused = try await client.execute(
                uri: "/console/catalog/import", method: .post,
                headers: [.contentType: "multipart/form-data; boundary=\(boundary)", .cookie: "fitbase_console=\(session)"], body: ByteBuffer(string: body)
            )
            #expect(refused.status == .unprocessableContent)
            let html = String(buffer: refused.body)
            let badRow = try #require(Self.row("workouts[1]", in: html))
            #expect(badRow.contains("Broken Burner") && badRow.contains("intensity: &quot;extreme&quot; is not one of"))
            let goodRow = try #require(Self.row("workouts[0]", in: html))
            #expect(goodRow.contains("valid") && !goodRow.contains("is not one of"))
            #expect(try await client.json(.get, "/v1/workouts?q=Morning%20Flow%20Console").status == .ok)
            #expect(try Self.titles(try await client.json(.get, "/v1/workouts?q=Morning%20Flow%20Console")).isEmpty)

            let fixed = String(decoding: try JSONSerialization.data(withJSONObject: ["workouts": [good], "programs": []]), as: UTF8.self)
            let imported = try await Self.post(client, "/console/catalog/import", session, "csrf=\(token)&catalog=\(Self.encoded(fixed))")
            #expect(imported.status == .ok && String(buffer: imported.body).contains("Imported 1 workout(s)"))
            #expect(try Self.titles(try await client.json(.get, "/v1/workouts?q=Morning%20Flow%20Console")) == ["Morning Flow Console"])
        }
    }

    @Test(arguments: TestEngines.all)
    func aWorkoutCreatedInTheConsoleIsServedByTheAPIAndOneAProgramUsesIsNotDeleted(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { client, app in
            let (admin, session) = try await Self.admin(client, app)
            let form = try await Self.get(client, "/console/catalog/new", session)
            let token = try #require(Self.csrf(in: form))
            let fields = [
                "csrf=\(token)", "title=Console%20Kettlebell%20Ladder", "description=Ladders", "type=hiitStrength", "durationMinutes=25",
                "intensity=high", "phases=follicular", "phases=ovulatory", "equipment=kettlebell", "targetAreas=fullBody",
                "thumbnailURL=https%3A%2F%2Fexample.com%2Ft.jpg", "videoURL=https%3A%2F%2Fexample.com%2Fv.mp4", "instructorName=Ana",
                "tags=ladder%2C+kettlebell", "benefits=Power",
            ]
            // A wrong field is shown beside it, nothing saved.
            let invalid = try await Self.post(client, "/console/catalog/workouts", session, fields.map { $0 == "durationMinutes=25" ? "durationMinutes=999" : $0 }.joined(separator: "&"))
            #expect(invalid.status == .unprocessableContent)
            #expect(String(buffer: invalid.body).contains("id=\"duration-error\">must be between 1 and 300"))
            let created = try await Self.post(client, "/console/catalog/workouts", session, fields.joined(separator: "&"))
            #expect(created.status == .seeOther)
            let found = try json(try await client.json(.get, "/v1/workouts?q=Kettlebell%20Ladder"))
            let item = try #require((found["items"] as? [[String: Any]])?.first { $0["title"] as? String == "Console Kettlebell Ladder" })
            #expect(item["durationMinutes"] as? Int == 25 && item["intensity"] as? String == "high")
            let trail = try await OperatorAuditTrail.recent(limit: 5, target: item["id"] as? String, in: app.database)
            #expect(trail.first?.action == OperatorAuditTrail.Action.workoutCreated.rawValue && trail.first?.admin.description == admin.id)

            let program = try #require((try json(try await client.json(.get, "/v1/programs"))["items"] as? [[String: Any]])?.first)
            let weeks = try #require(program["weeks"] as? [[String: Any]])
            let used = try #require((weeks.first?["workoutIds"] as? [String])?.first)
            let refused = try await Self.post(client, "/console/catalog/workouts/\(used)/delete", session, "csrf=\(token)")
            #expect(refused.status == .conflict)
            #expect(String(buffer: refused.body).contains("A program includes this workout"))
            #expect(try await client.json(.get, "/v1/workouts/\(used)").status == .ok)
        }
    }

    @Test(arguments: TestEngines.all)
    func anAccountIsDeletedOnlyWithItsAddressTypedAndTheDeletionIsAudited(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (admin, session) = try await Self.admin(client, app)
            let user = try await client.signUp()
            let token = try #require(Self.csrf(in: try await Self.get(client, "/console/users/\(user.id)", session)))
            let wrong = try await Self.post(client, "/console/users/\(user.id)/delete", session, "csrf=\(token)&confirm=someone%40else.test")
            #expect(wrong.status == .badRequest || wrong.status == .unprocessableContent)
            #expect(String(buffer: wrong.body).contains("confirm"))
            #expect(try await client.json(.get, "/v1/me", token: user.accessToken).status == .ok)
            let own = try await Self.post(client, "/console/users/\(admin.id)/delete", session, "csrf=\(token)&confirm=\(Self.encoded(admin.email.lowercased()))")
            #expect(own.status == .forbidden)

            let deleted = try await Self.post(client, "/console/users/\(user.id)/delete", session, "csrf=\(token)&confirm=\(Self.encoded(user.email.lowercased()))")
            #expect(deleted.status == .ok && String(buffer: deleted.body).contains("were deleted"))
            #expect(try await client.json(.get, "/v1/me", token: user.accessToken).status == .unauthorized)
            #expect(try await Self.get(client, "/console/users/\(user.id)", session).status == .notFound)
            let trail = try await OperatorAuditTrail.recent(limit: 10, target: user.id, in: app.database)
            #expect(trail.contains { $0.action == OperatorAuditTrail.Action.userDeleted.rawValue && $0.admin.description == admin.id })
        }
    }

    @Test(arguments: TestEngines.all)
    func aMemberIsRemovedAndAGroupEndedFromTheConsole(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (_, session) = try await Self.admin(client, app)
            let owner = try await client.signUp()
            let created = try await client.json(.post, "/v1/groups", body: ["name": "Console Crew"], token: owner.accessToken)
            let group = try #require(try json(created)["id"] as? String)
            let invite = try json(try await client.json(.post, "/v1/groups/\(group)/invites", body: [:], token: owner.accessToken))
            let member = try await client.signUp()
            let inviteToken = try #require(invite["token"] as? String)
            #expect(try await client.json(.post, "/v1/invites/\(inviteToken)/accept", token: member.accessToken).status.code < 300)

            let list = String(buffer: try await Self.get(client, "/console/groups", session).body)
            #expect(list.contains("Console Crew") && list.contains("/console/groups/\(group)"))
            let page = try await Self.get(client, "/console/groups/\(group)", session)
            let token = try #require(Self.csrf(in: page))
            #expect(String(buffer: page.body).contains("/console/groups/\(group)/members/\(member.id)/remove"))
            let removed = try await Self.post(client, "/console/groups/\(group)/members/\(member.id)/remove", session, "csrf=\(token)")
            #expect(removed.status == .seeOther)
            #expect(try await client.json(.get, "/v1/groups/current", token: member.accessToken).status == .notFound)
            #expect(try await client.json(.get, "/v1/groups/current", token: owner.accessToken).status == .ok)

            let ended = try await Self.post(client, "/console/groups/\(group)/end", session, "csrf=\(token)")
            #expect(ended.status == .ok && String(buffer: ended.body).contains("The group ended"))
            #expect(try await client.json(.get, "/v1/groups/current", token: owner.accessToken).status == .notFound)
            #expect(try await Self.post(client, "/console/groups/\(group)/end", session, "csrf=\(token)").status == .notFound)
            let actions = try await OperatorAuditTrail.recent(limit: 10, target: group, in: app.database).map(\.action)
            #expect(actions == [OperatorAuditTrail.Action.groupEnded.rawValue, OperatorAuditTrail.Action.memberRemoved.rawValue])
        }
    }

    @Test(arguments: TestEngines.all)
    func aFailedEmailIsSentAgainAndAFailedWebhookIsListed(engine: DatabaseEngine) async throws {
        let mailer = RecordingMailer()
        try await withApp(engine, options: .init(mailer: mailer)) { client, app in
            let (_, session) = try await Self.admin(client, app)
            let user = try await client.signUp()
            let address = user.email.lowercased()
            #expect(try await mailer.received(by: address).count == 1)
            let owner = try #require(UUID(uuidString: user.id))
            let job = try await app.database.transaction { db in
                let row = try await db.select().column("id").from("outbox").where("user_id", .equal, owner).first()
                guard let id = try row?.decode(column: "id", as: UUID.self) else { throw OutboxRowMissing() }
                try await db.update("outbox").set("status", to: "failed").set("last_error", to: "550 mailbox unavailable").where("id", .equal, id).run()
                return id.uuidString.lowercased()
            }
            let page = try await Self.get(client, "/console/deliveries?status=failed", session)
            let html = String(buffer: page.body)
            #expect(html.contains("550 mailbox unavailable") && html.contains("/console/deliveries/\(job)/retry"))
            let retried = try await Self.post(client, "/console/deliveries/\(job)/retry", session, "csrf=\(try #require(Self.csrf(in: page)))")
            #expect(retried.status == .seeOther)
            #expect(try await mailer.received(by: address, atLeast: 2).count == 2)
            let trail = try await OperatorAuditTrail.recent(limit: 5, target: job, in: app.database)
            #expect(trail.first?.action == OperatorAuditTrail.Action.deliveryRetried.rawValue)

            // A webhook that fails (here: App Store notifications while no bundle id is configured) is listed with its error.
            let hook = try await client.json(.post, "/v1/webhooks/appstore", body: ["signedPayload": "not.a.jws"])
            #expect(hook.status == .serviceUnavailable)
            let stripe = try await client.json(.post, "/v1/webhooks/stripe", body: ["id": "evt_console"])
            #expect(stripe.status == .serviceUnavailable)
            let deliveries = String(buffer: try await Self.get(client, "/console/deliveries", session).body)
            #expect(deliveries.contains("<td>appStore</td>") && deliveries.contains("FITBASE_APPSTORE_BUNDLE_ID"))
            #expect(deliveries.contains("<td>stripe</td>") && deliveries.contains("FITBASE_STRIPE_WEBHOOK_SECRETS"))
            #expect(deliveries.contains("<td class=\"num\">503</td>"))
            let dashboard = String(buffer: try await Self.get(client, "/console", session).body)
            #expect(dashboard.contains("<dt>Webhook failures, last 14 days</dt><dd>2</dd>"))
        }
    }

    // MARK: Helpers

    /// An administrator with a console session (its cookie's value).
    static func admin(_ client: any TestClientProtocol, _ app: TestApp) async throws -> (TestAccount, String) {
        let admin = try await client.signUp()
        try await UserStore(database: app.database).setRole(.admin, for: try #require(UserID(admin.id)), now: .storageNow)
        let signedIn = try await signIn(client, email: admin.email, password: admin.password)
        try #require(signedIn.status == .seeOther, "console sign-in answered \(signedIn.status)")
        return (admin, try #require(cookie("fitbase_console", in: signedIn)))
    }

    static func signIn(_ client: any TestClientProtocol, email: String, password: String) async throws -> TestResponse {
        let page = try await client.execute(uri: "/console/signin", method: .get)
        let signInCookie = try #require(cookie("fitbase_console_signin", in: page))
        return try await client.execute(
            uri: "/console/signin", method: .post,
            headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "fitbase_console_signin=\(signInCookie)"],
            body: ByteBuffer(string: "csrf=\(try #require(csrf(in: page)))&email=\(encoded(email))&password=\(encoded(password))")
        )
    }

    static func get(_ client: any TestClientProtocol, _ path: String, _ session: String) async throws -> TestResponse {
        try await client.execute(uri: path, method: .get, headers: [.cookie: "fitbase_console=\(session)"])
    }

    static func post(_ client: any TestClientProtocol, _ path: String, _ session: String, _ body: String) async throws -> TestResponse {
        try await client.execute(
            uri: path, method: .post, headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "fitbase_console=\(session)"],
            body: ByteBuffer(string: body)
        )
    }

    static func cookie(_ name: String, in response: TestResponse) -> String? {
        for header in response.headers[values: .setCookie] where header.hasPrefix("\(name)=") {
            let value = header.dropFirst(name.count + 1).prefix { $0 != ";" }
            if !value.isEmpty { return String(value) }
        }
        return nil
    }

    static func csrf(in response: TestResponse) -> String? {
        let html = String(buffer: response.body)
        guard let start = html.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(html[start.upperBound...].prefix { $0 != "\"" })
    }

    /// The table row of the import page for `record` (`workouts[1]`).
    static func row(_ record: String, in html: String) -> String? {
        guard let start = html.range(of: "data-record=\"\(record)\"") else { return nil }
        guard let end = html[start.upperBound...].range(of: "</tr>") else { return nil }
        return String(html[start.upperBound..<end.lowerBound])
    }

    static func encoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static func sessionID(of accessToken: String) -> String? {
        let parts = accessToken.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        guard let data = Data(base64Encoded: payload), let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return claims["sid"] as? String
    }

    static func tier(_ client: any TestClientProtocol, _ account: TestAccount) async throws -> String? {
        try json(try await client.json(.get, "/v1/subscription", token: account.accessToken))["tier"] as? String
    }

    static func titles(_ response: TestResponse) throws -> [String] {
        ((try json(response)["items"] as? [[String: Any]]) ?? []).compactMap { $0["title"] as? String }
    }

    static func workoutRecord(id: UUID, title: String, intensity: String) -> [String: Any] {
        [
            "id": id.uuidString.lowercased(), "title": title, "description": "", "type": "yoga", "durationMinutes": 20, "intensity": intensity,
            "phases": ["menstrual"], "equipment": ["yogaMat"], "thumbnailURL": "https://example.com/t.jpg", "videoURL": "https://example.com/v.mp4",
            "instructorName": "Ana", "tags": [], "isFeatured": false, "isPremium": false, "targetAreas": ["core"], "benefits": [],
        ]
    }
}

/// The e-mail a sign-up queues was not in the outbox.
private struct OutboxRowMissing: Error {}

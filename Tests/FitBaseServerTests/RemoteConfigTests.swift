import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// `GET /v1/config`, `fitbase config`'s administration and the console's Config page: staged rollouts that keep their
/// users, conditions from the query, testers' overrides, entity tags, audited changes seen by every instance.
@Suite struct RemoteConfigTests {
    /// An administrator to record changes as.
    static func editor(_ client: any TestClientProtocol, _ app: TestApp) async throws -> (ConfigEditor, RemoteConfigAdministration) {
        let account = try await client.signUp()
        try await UserStore(database: app.database).setRole(.admin, for: try #require(UserID(account.id)), now: .storageNow)
        let administration = RemoteConfigAdministration(database: app.database, clock: .system)
        return (try await administration.editor(email: account.email), administration)
    }

    static func values(_ client: any TestClientProtocol, _ token: String?, query: String = "") async throws -> [String: Any] {
        let response = try await client.json(.get, "/v1/config" + query, token: token)
        try #require(response.status == .ok, "GET /v1/config\(query) answered \(response.status): \(String(buffer: response.body))")
        return try #require(try json(response)["values"] as? [String: Any])
    }

    /// Signs up accounts until one is inside a rollout of `basisPoints` of `key` and one is outside.
    static func insideAndOutside(_ client: any TestClientProtocol, key: String, basisPoints: Int) async throws -> (inside: TestAccount, outside: TestAccount) {
        var inside: TestAccount?
        var outside: TestAccount?
        for _ in 0..<200 where inside == nil || outside == nil {
            let account = try await client.signUp()
            if RemoteConfigRules.isInRollout(key: key, user: try #require(UserID(account.id)), basisPoints: basisPoints) {
                inside = inside ?? account
            } else {
                outside = outside ?? account
            }
        }
        return (try #require(inside), try #require(outside))
    }

    @Test(arguments: TestEngines.all)
    func aUserInsideAtTenPercentStaysInsideAtTwentyAndAnonymousCallersGetPublicDefaultsOnly(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (editor, administration) = try await Self.editor(client, app)
            #expect(try await Self.values(client, nil).isEmpty)
            try await administration.set("social_beta", ConfigFlagChange(value: "true", defaultValue: "false", rolloutPercent: "10"), by: editor)
            try await administration.set("leaderboard_page_size", ConfigFlagChange(value: "20", isPublic: true), by: editor)
            try await administration.set(
                "welcome", ConfigFlagChange(kind: "json", value: #"{"title":"Hi","cards":[1,2]}"#, defaultValue: "[]", isPublic: true), by: editor)
            let (inside, outside) = try await Self.insideAndOutside(client, key: "social_beta", basisPoints: 1_000)

            let insideValues = try await Self.values(client, inside.accessToken)
            #expect(insideValues["social_beta"] as? Bool == true)
            #expect(insideValues["leaderboard_page_size"] as? Int == 20)
            #expect((insideValues["welcome"] as? [String: Any])?["title"] as? String == "Hi")
            #expect(try await Self.values(client, outside.accessToken)["social_beta"] as? Bool == false)
            let anonymous = try await Self.values(client, nil)
            // The public flags at their defaults; the staged social_beta is not named to a caller without an account.
            #expect(anonymous["social_beta"] == nil && anonymous["leaderboard_page_size"] as? Int == 0 && (anonymous["welcome"] as? [Any])?.isEmpty == true)

            try await administration.rollout("social_beta", percent: "20", by: editor)
            #expect(try await Self.values(client, inside.accessToken)["social_beta"] as? Bool == true)
            try await administration.rollout("social_beta", percent: "100", by: editor)
            #expect(try await Self.values(client, outside.accessToken)["social_beta"] as? Bool == true)
            #expect(try await Self.values(client, nil)["social_beta"] == nil)

            // Each change is in the operator audit trail: who, when, what.
            let trail = try await OperatorAuditTrail.recent(limit: 10, target: "social_beta", in: app.database)
            #expect(trail.map(\.action) == ["config.rollout-changed", "config.rollout-changed", "config.flag-saved"])
            #expect(trail.allSatisfy { $0.admin == editor.user && $0.adminEmail == editor.email && abs($0.at.timeIntervalSinceNow) < 600 })
            #expect(trail.first?.detail == "20 % → 100 %")
        }
    }

    @Test(arguments: TestEngines.all)
    func conditionsOnTierVersionPlatformAndLocaleComeFromTheQuery(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (editor, administration) = try await Self.editor(client, app)
            let change = ConfigFlagChange(value: "true", tiers: "pro,premium", appVersions: ">=1.4.0 <2.0.0", platforms: "ios,ipados", locales: "de,pt-BR")
            try await administration.set("new_paywall", change, by: editor)
            let user = try await client.signUp()
            let admitted = "?appVersion=1.4.2&platform=ios&locale=de-AT"
            // Free: the tier condition keeps the user out.
            #expect(try await Self.values(client, user.accessToken, query: admitted)["new_paywall"] as? Bool == false)
            try await AccountAdministration(database: app.database, clock: .system).grantTier("pro", toEmail: user.email, days: 30)
            #expect(try await Self.values(client, user.accessToken, query: admitted)["new_paywall"] as? Bool == true)
            for query in ["", "?appVersion=1.3.9&platform=ios&locale=de", "?appVersion=2.0&platform=ios&locale=de", "?appVersion=1.5&platform=android&locale=de",
                "?appVersion=1.5&platform=ios&locale=pt-PT", "?appVersion=1.5&platform=ios"] {
                #expect(try await Self.values(client, user.accessToken, query: query)["new_paywall"] as? Bool == false, "\(query)")
            }
            #expect(try await Self.values(client, user.accessToken, query: "?appVersion=1.9.9&platform=ipados&locale=pt_BR")["new_paywall"] as? Bool == true)

            for (query, field) in [("?appVersion=1.4-beta", "appVersion"), ("?platform=symbian", "platform"), ("?locale=german!", "locale")] {
                let response = try await client.json(.get, "/v1/config" + query, token: user.accessToken)
                #expect(response.status == .badRequest, "\(query)")
                let problem = try expectProblem(response, .validationFailed)
                #expect((problem["errors"] as? [[String: Any]])?.first?["field"] as? String == field)
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func aTestersOverrideWinsAndIsRemovedAgain(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (editor, administration) = try await Self.editor(client, app)
            try await administration.set("social_beta", ConfigFlagChange(value: "true", rolloutPercent: "0"), by: editor)
            let tester = try await client.signUp()
            let other = try await client.signUp()
            try await administration.override("social_beta", email: tester.email, value: "true", by: editor)
            #expect(try await Self.values(client, tester.accessToken)["social_beta"] as? Bool == true)
            #expect(try await Self.values(client, other.accessToken)["social_beta"] as? Bool == false)
            // Anonymous callers get nothing of a flag that is not public, even from a tester's device.
            #expect(try await Self.values(client, nil)["social_beta"] == nil)
            await #expect(throws: InvalidFields.self) { try await administration.override("social_beta", email: tester.email, value: "maybe", by: editor) }
            // The flag's kind cannot change under a tester's value of the old kind.
            await #expect(throws: InvalidFields.self) {
                try await administration.set("social_beta", ConfigFlagChange(kind: "number", value: "3", defaultValue: "0"), by: editor)
            }
            #expect(try await Self.values(client, tester.accessToken)["social_beta"] as? Bool == true)
            try await administration.override("social_beta", email: tester.email, value: nil, by: editor)
            #expect(try await Self.values(client, tester.accessToken)["social_beta"] as? Bool == false)
            let trail = try await OperatorAuditTrail.recent(limit: 10, target: "social_beta", in: app.database)
            #expect(trail.map(\.action).prefix(2) == ["config.override-changed", "config.override-changed"])
            #expect(trail.first?.detail == "user \(tester.id): removed")
            // The tester's account goes, and its override with it.
            #expect(try await client.json(.delete, "/v1/me", token: tester.accessToken).status == .noContent)
            #expect(try await administration.list().first?.flag.overrides.isEmpty == true)
        }
    }

    /// Issue 53: an anonymous `GET /v1/config` listed every flag key, unreleased ones included.
    @Test(arguments: TestEngines.all)
    func anonymousCallersSeeOnlyTheFlagsMarkedPublic(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (_, session) = try await ConsoleTests.admin(client, app)
            let token = try #require(ConsoleTests.csrf(in: try await ConsoleTests.get(client, "/console/config", session)))
            let (editor, administration) = try await Self.editor(client, app)
            try await administration.set("secret_redesign", ConfigFlagChange(value: "true", defaultValue: "false", rolloutPercent: "0"), by: editor)
            let form = "csrf=\(token)&key=onboarding_variant&kind=number&value=2&defaultValue=1&rolloutPercent=50&isPublic=1"
            #expect(try await ConsoleTests.post(client, "/console/config/flags", session, form).status == .seeOther)

            let anonymous = try await client.json(.get, "/v1/config", token: nil)
            #expect(!String(buffer: anonymous.body).contains("secret_redesign"))
            let values = try #require(try json(anonymous)["values"] as? [String: Any])
            #expect(values.count == 1 && values["onboarding_variant"] as? Int == 1)
            let user = try await client.signUp()
            let signedIn = try await Self.values(client, user.accessToken)
            #expect(signedIn["secret_redesign"] as? Bool == false && signedIn["onboarding_variant"] != nil)

            let listed = String(buffer: try await ConsoleTests.get(client, "/console/config", session).body)
            #expect(listed.contains("<td>public</td>") && listed.contains("<td>hidden</td>"))
            let edit = String(buffer: try await ConsoleTests.get(client, "/console/config?edit=onboarding_variant", session).body)
            #expect(edit.contains("name=\"isPublic\" value=\"1\" checked"))
            // Saved again without the box: hidden from anonymous callers again; public through the administration.
            let hidden = "csrf=\(token)&key=onboarding_variant&kind=number&value=2&defaultValue=1&rolloutPercent=50"
            #expect(try await ConsoleTests.post(client, "/console/config/flags", session, hidden).status == .seeOther)
            #expect(try await Self.values(client, nil).isEmpty)
            let flag = try await administration.set("secret_redesign", ConfigFlagChange(isPublic: true), by: editor)
            #expect(RemoteConfigAdministration.describe(flag).hasSuffix(" public"))
            let shown = try await Self.values(client, nil)
            #expect(shown.count == 1 && shown["secret_redesign"] as? Bool == false)
        }
    }

    @Test(arguments: TestEngines.all)
    func aFlagThatBreaksARuleIsRefusedNamingTheFieldAndNothingChanges(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (editor, administration) = try await Self.editor(client, app)
            let refused: [(String, ConfigFlagChange, String)] = [
                ("Social Beta", ConfigFlagChange(value: "true"), "key"),
                ("beta", ConfigFlagChange(kind: "bool", value: "yes please"), "value"),
                ("beta", ConfigFlagChange(value: "true", defaultValue: "3"), "defaultValue"),
                ("beta", ConfigFlagChange(value: "true", rolloutPercent: "150"), "rolloutPercent"),
                ("beta", ConfigFlagChange(value: "true", tiers: "gold"), "tiers"),
                ("beta", ConfigFlagChange(value: "true", appVersions: ">=one"), "appVersions"),
                ("beta", ConfigFlagChange(value: "true", platforms: "symbian"), "platforms"),
                ("beta", ConfigFlagChange(value: "true", locales: "deutsch!"), "locales"),
                ("beta", ConfigFlagChange(kind: "colour", value: "red"), "kind"),
                ("beta", ConfigFlagChange(kind: "json", value: "{"), "value"),
                ("beta", ConfigFlagChange(defaultValue: "false"), "value"),
            ]
            for (key, change, field) in refused {
                do {
                    try await administration.set(key, change, by: editor)
                    Issue.record("\(key) \(change) was saved")
                } catch let invalid as InvalidFields {
                    #expect(invalid.errors.first?.field == field, "\(change): \(invalid.errors)")
                }
            }
            #expect(try await administration.list().isEmpty)
            #expect(try await OperatorAuditTrail.recent(limit: 10, in: app.database).isEmpty)
            // Only an administrator may change the config.
            let user = try await client.signUp()
            await #expect(throws: AdministrationError.self) { try await administration.editor(email: user.email) }
        }
    }

    @Test(arguments: TestEngines.all)
    func theETagAnswers304UntilAChangeForTheCaller(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (editor, administration) = try await Self.editor(client, app)
            try await administration.set("social_beta", ConfigFlagChange(value: "true", rolloutPercent: "0"), by: editor)
            let user = try await client.signUp()
            let first = try await client.json(.get, "/v1/config", token: user.accessToken)
            let tag = try #require(first.headers[.eTag])
            #expect(first.headers[.cacheControl] == "private, no-cache")
            let again = try await client.execute(uri: "/v1/config", method: .get, headers: [.authorization: "Bearer \(user.accessToken)", .ifNoneMatch: tag])
            #expect(again.status == .notModified && again.body.readableBytes == 0)
            // A change that does not change this caller's values keeps the tag.
            try await administration.set("social_beta", ConfigFlagChange(summary: "The groups tab"), by: editor)
            #expect(try await client.execute(uri: "/v1/config", method: .get, headers: [.authorization: "Bearer \(user.accessToken)", .ifNoneMatch: tag]).status == .notModified)
            try await administration.override("social_beta", email: user.email, value: "true", by: editor)
            let changed = try await client.execute(uri: "/v1/config", method: .get, headers: [.authorization: "Bearer \(user.accessToken)", .ifNoneMatch: tag])
            #expect(changed.status == .ok && changed.headers[.eTag] != tag)
            // A token presented but refused is a 401 (the app refreshes), not an anonymous caller's defaults.
            #expect(try await client.json(.post, "/v1/auth/signout", token: user.accessToken).status == .noContent)
            try expectProblem(try await client.json(.get, "/v1/config", token: user.accessToken), .sessionRevoked)
            #expect(try await client.json(.get, "/v1/config", token: "not.a.token").status == .unauthorized)
        }
    }

    /// Two instances on one database (PostgreSQL when configured, else one SQLite file): a change made through one
    /// instance's console is served by the other's next requests, once its notification has arrived (PostgreSQL; at
    /// once on one SQLite file).
    @Test(arguments: TestEngines.all)
    func aChangeOnOneInstanceIsSeenByTheOthersNextRequest(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            let masterKey = SharedKeysTests.randomMasterKey()
            try await SharedKeysTests.withDataDirectories(1) { directories in
                try await withApp(on: testDatabase, options: .instance(testDatabase.dataDirectory, masterKey: masterKey)) { a, appA async throws in
                    try await withApp(on: testDatabase, options: .instance(directories[0], masterKey: masterKey)) { b, appB async throws in
                        try await CacheTests.untilListening(appB)
                        let (_, session) = try await ConsoleTests.admin(a, appA)
                        let user = try await b.signUp()
                        #expect(try await Self.values(b, user.accessToken).isEmpty)  // B now holds the (empty) flags
                        let page = try await ConsoleTests.get(a, "/console/config", session)
                        let token = try #require(ConsoleTests.csrf(in: page))
                        let saved = try await ConsoleTests.post(a, "/console/config/flags", session, "csrf=\(token)&key=social_beta&value=true&defaultValue=false&rolloutPercent=100")
                        #expect(saved.status == .seeOther)
                        try await CacheTests.expectSoon { try await Self.values(b, user.accessToken)["social_beta"] as? Bool == true }
                        #expect(try await ConsoleTests.post(a, "/console/config/flags/social_beta/rollout", session, "csrf=\(token)&rolloutPercent=0").status == .seeOther)
                        try await CacheTests.expectSoon { try await Self.values(b, user.accessToken)["social_beta"] as? Bool == false }
                    }
                }
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func theConsoleListsSavesAndAuditsFlagsAndRefusesAFormWithoutItsToken(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (admin, session) = try await ConsoleTests.admin(client, app)
            let page = try await ConsoleTests.get(client, "/console/config", session)
            #expect(page.status == .ok && String(buffer: page.body).contains("No flags yet."))
            let token = try #require(ConsoleTests.csrf(in: page))
            let forged = try await ConsoleTests.post(client, "/console/config/flags", session, "key=social_beta&value=true")
            #expect(forged.status == .forbidden)
            #expect(try await RemoteConfigStore(database: app.database).flags().isEmpty)

            let bad = try await ConsoleTests.post(client, "/console/config/flags", session, "csrf=\(token)&key=social_beta&kind=bool&value=yes%20please&rolloutPercent=10")
            #expect(bad.status == .unprocessableContent)
            let badHTML = String(buffer: bad.body)
            #expect(badHTML.contains("id=\"value-error\"") && badHTML.contains("must be a bool value") && badHTML.contains("value=\"yes please\""))

            let saved = try await ConsoleTests.post(
                client, "/console/config/flags", session,
                "csrf=\(token)&key=social_beta&kind=bool&value=true&defaultValue=false&rolloutPercent=10&tiers=&appVersions=%3E%3D1.4&platforms=ios&locales=&summary=Groups%20tab")
            #expect(saved.status == .seeOther)
            let listed = String(buffer: try await ConsoleTests.get(client, "/console/config", session).body)
            #expect(listed.contains("<code>social_beta</code>") && listed.contains("app &gt;=1.4.0; ios") && listed.contains(admin.email.lowercased()))
            #expect(try await ConsoleTests.post(client, "/console/config/flags/social_beta/rollout", session, "csrf=\(token)&rolloutPercent=abc").status == .unprocessableContent)
            #expect(try await ConsoleTests.post(client, "/console/config/flags/social_beta/rollout", session, "csrf=\(token)&rolloutPercent=25").status == .seeOther)
            #expect(try await RemoteConfigStore(database: app.database).flag("social_beta")?.rolloutBasisPoints == 2_500)
            let tester = try await client.signUp()
            #expect(try await ConsoleTests.post(client, "/console/config/testers", session, "csrf=\(token)&key=social_beta&email=\(ConsoleTests.encoded(tester.email))&value=true").status == .seeOther)
            #expect(try await Self.values(client, tester.accessToken, query: "?platform=android")["social_beta"] as? Bool == true)
            #expect(try await ConsoleTests.post(client, "/console/config/flags/social_beta/delete", session, "csrf=\(token)").status == .seeOther)
            #expect(try await Self.values(client, tester.accessToken).isEmpty)
            #expect(try await ConsoleTests.post(client, "/console/config/flags/social_beta/delete", session, "csrf=\(token)").status == .notFound)
            let trail = try await OperatorAuditTrail.recent(limit: 10, target: "social_beta", in: app.database)
            #expect(trail.map(\.action) == ["config.flag-deleted", "config.override-changed", "config.rollout-changed", "config.flag-saved"])
            #expect(trail.allSatisfy { $0.adminEmail == admin.email.lowercased() })
        }
    }
}

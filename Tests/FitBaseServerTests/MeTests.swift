import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// The signed-in user's profile, onboarding, consents, export and deletion, on every engine.
@Suite struct MeTests {
    @Test(arguments: TestEngines.all)
    func newAccountsHaveTheDocumentedDefaults(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let me = try json(try await client.json(.get, "/v1/me", token: account.accessToken))
            #expect(me["averageCycleLength"] as? Int == 28)
            #expect(me["averagePeriodLength"] as? Int == 5)
            #expect(me["cycleTrackingEnabled"] as? Bool == false)
            #expect((me["privacy"] as? [String: Any])?["shareWorkoutData"] as? Bool == true)
            #expect(me["onboardingCompleted"] as? Bool == false)
            #expect(me["signInMethods"] as? [String] == ["password"])
        }
    }

    @Test(arguments: TestEngines.all)
    func onboardingCompletesWhenEveryStepIsAnswered(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let first = try json(try await client.json(.patch, "/v1/me", body: [
                "displayName": "Maya", "fitnessLevel": "intermediate", "goals": ["buildStrength", "reduceStress", "buildStrength"],
                "preferredWorkoutTypes": ["pilates", "yoga"], "cycleTrackingEnabled": true, "averageCycleLength": 31,
            ], token: account.accessToken))
            #expect(first["goals"] as? [String] == ["buildStrength", "reduceStress"])
            #expect(first["onboardingCompleted"] as? Bool == false)  // cycle date and notifications still open

            let done = try json(try await client.json(.patch, "/v1/me", body: [
                "lastPeriodStartDate": "2026-11-01", "notificationsEnabled": false, "preferredWorkoutTime": "07:30",
                "timeZone": "Asia/Kolkata", "privacy": ["shareWorkoutData": false],
            ], token: account.accessToken))
            #expect(done["onboardingCompleted"] as? Bool == true)
            #expect(done["displayName"] as? String == "Maya")
            #expect(done["averageCycleLength"] as? Int == 31)
            #expect(done["timeZone"] as? String == "Asia/Kolkata")
            #expect((done["privacy"] as? [String: Any])?["shareWorkoutData"] as? Bool == false)

            // What was stored is what a fresh read returns.
            let again = try json(try await client.json(.get, "/v1/me", token: account.accessToken))
            #expect(again["preferredWorkoutTypes"] as? [String] == ["pilates", "yoga"])
            #expect(again["lastPeriodStartDate"] as? String == "2026-11-01")
        }
    }

    @Test(arguments: [
        (["averageCycleLength": 46] as [String: any Sendable], "averageCycleLength"),
        (["averagePeriodLength": 1], "averagePeriodLength"),
        (["lastPeriodStartDate": "2026-02-30"], "lastPeriodStartDate"),
        (["lastPeriodStartDate": "2999-01-01"], "lastPeriodStartDate"),
        (["preferredWorkoutTime": "25:00"], "preferredWorkoutTime"),
        (["timeZone": "Mars/Olympus"], "timeZone"),
        (["timeZone": "EST"], "timeZone"),
        (["timeZone": "Etc/GMT+5"], "timeZone"),
        (["fitnessLevel": "olympian"], "fitnessLevel"),
        (["goals": ["getRich"]], "goals[0]"),
    ])
    func badProfileValuesAre400sNamingTheField(body: [String: any Sendable], field: String) async throws {
        try await withApp(.sqlite) { client, _ in
            let account = try await client.signUp()
            let response = try await client.json(.patch, "/v1/me", body: body, token: account.accessToken)
            #expect(response.status == .badRequest)
            let problem = try json(response)
            let errors = try #require(problem["errors"] as? [[String: String]])
            #expect(errors.map { $0["field"] } == [field])
            // Nothing was half-written.
            let me = try json(try await client.json(.get, "/v1/me", token: account.accessToken))
            #expect(me["averageCycleLength"] as? Int == 28)
        }
    }

    /// What phones report as `TimeZone.current` is taken, on the profile as on a device.
    @Test func theZoneNamesPhonesReportAreAccepted() async throws {
        try await withApp(.sqlite) { client, _ in
            let account = try await client.signUp()
            for zone in ["GMT", "UTC", "Etc/UTC", "America/Argentina/Buenos_Aires", "Asia/Kolkata"] {
                let response = try await client.json(.patch, "/v1/me", body: ["timeZone": zone], token: account.accessToken)
                #expect(response.status == .ok, "\(zone)")
                #expect(try json(response)["timeZone"] as? String == zone)
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func consentsKeepTheirHistory(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let granted = try await client.json(.post, "/v1/me/consents", body: ["kind": "healthData", "version": "v1", "granted": true], token: account.accessToken)
            #expect(granted.status == .created)
            #expect(try json(granted)["granted"] as? Bool == true)
            try await client.json(.post, "/v1/me/consents", body: ["kind": "healthData", "version": "v1", "granted": false], token: account.accessToken)
            try await client.json(.post, "/v1/me/consents", body: ["kind": "terms", "version": "2026-01", "granted": true], token: account.accessToken)

            let list = try json(try await client.json(.get, "/v1/me/consents", token: account.accessToken))
            let items = try #require(list["items"] as? [[String: Any]])
            #expect(items.map { $0["kind"] as? String } == ["terms", "healthData"])
            let health = try #require(items.first { $0["kind"] as? String == "healthData" })
            #expect(health["granted"] as? Bool == false)
            #expect((health["history"] as? [[String: Any]])?.map { $0["granted"] as? Bool } == [true, false])

            let unknown = try await client.json(.post, "/v1/me/consents", body: ["kind": "everything", "version": "v1", "granted": true], token: account.accessToken)
            #expect(unknown.status == .badRequest)
            let blank = try await client.json(.post, "/v1/me/consents", body: ["kind": "terms", "version": " ", "granted": true], token: account.accessToken)
            #expect(blank.status == .badRequest)
        }
    }

    @Test(arguments: TestEngines.all)
    func exportRoundTripsWhatWasStored(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp(device: "Maya's iPhone")
            try await client.json(.patch, "/v1/me", body: ["displayName": "Maya", "goals": ["consistency"], "timeZone": "Europe/Lisbon"], token: account.accessToken)
            try await client.json(.post, "/v1/me/consents", body: ["kind": "privacy", "version": "3", "granted": true], token: account.accessToken)

            let response = try await client.json(.get, "/v1/me/export", token: account.accessToken)
            #expect(response.status == .ok)
            #expect(response.headers[.contentDisposition] == "attachment")
            let export = try json(response)
            #expect(export["userId"] as? String == account.id)
            let sections = try #require(export["sections"] as? [String: Any])
            let profile = try #require(sections["account"] as? [String: Any])
            #expect(profile["email"] as? String == account.email.lowercased())
            #expect(profile["displayName"] as? String == "Maya")
            #expect(profile["goals"] as? [String] == ["consistency"])
            #expect(profile["timeZone"] as? String == "Europe/Lisbon")
            let consents = try #require(sections["consents"] as? [[String: Any]])
            #expect(consents.map { $0["kind"] as? String } == ["privacy"])
            let sessions = try #require(sections["sessions"] as? [[String: Any]])
            #expect(sessions.map { $0["deviceLabel"] as? String } == ["Maya's iPhone"])
            #expect(!String(buffer: response.body).contains("$2b$"))  // no password hash
            #expect(!String(buffer: response.body).contains(account.refreshToken))
        }
    }

    @Test(arguments: TestEngines.all)
    func deletionLeavesNoRowWithTheUsersIDAndEndsItsTokens(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let other = try await client.signIn(account, device: "Watch")
            let bystander = try await client.signUp()
            try await client.json(.patch, "/v1/me", body: ["displayName": "Gone Soon", "goals": ["consistency"]], token: account.accessToken)
            try await client.json(.post, "/v1/me/consents", body: ["kind": "terms", "version": "1", "granted": true], token: account.accessToken)
            try await client.json(.post, "/v1/me/consents", body: ["kind": "terms", "version": "1", "granted": true], token: bystander.accessToken)

            #expect(try await client.json(.delete, "/v1/me", token: account.accessToken).status == .noContent)

            try expectProblem(try await client.json(.get, "/v1/me", token: account.accessToken), .sessionRevoked)
            try expectProblem(try await client.json(.get, "/v1/me", token: other.accessToken), .sessionRevoked)
            try expectProblem(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": other.refreshToken]), .invalidRefreshToken)
            #expect(try await client.json(.post, "/v1/auth/signin", body: ["email": account.email, "password": account.password]).status == .unauthorized)

            let database = app.database
            let leftovers = try await rowsMentioning(account.id, in: database)
            let bystanderRows = try await rowsMentioning(bystander.id, in: database)
            #expect(leftovers == [:])
            #expect(bystanderRows["users"] == 1)
            #expect(bystanderRows["consents"] == 1)
        }
    }

    @Test func deletionNeedsARecentSignIn() async throws {
        try await withApp(.sqlite) { client, app in
            let account = try await client.signUp()
            let signer = await SessionTokenSigner(key: try await currentSigningKey(of: app), issuer: "http://127.0.0.1:0")
            let claims = try await signer.verify(account.accessToken)
            let stale = try await signer.issue(
                user: claims.user, session: claims.session, authenticatedAt: .now.addingTimeInterval(-301), now: .now
            ).token
            let refused = try await client.json(.delete, "/v1/me", token: stale)
            #expect(refused.status == .unauthorized)
            try expectProblem(refused, .reauthenticationRequired)
            #expect(try await client.json(.get, "/v1/me", token: account.accessToken).status == .ok)
        }
    }

    /// For every table and column, how many rows mention `id` (in any letter case, inside JSON too).
    private func rowsMentioning(_ id: String, in database: Database) async throws -> [String: Int] {
        let engine = database.engine
        return try await database.withConnection { db in
            let columns: [(String, String)]
            if engine == .sqlite {
                var found: [(String, String)] = []
                let tables = try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all()
                for table in try tables.map({ try $0.decode(column: "name", as: String.self) }) {
                    let info = try await db.raw("SELECT name FROM pragma_table_info(\(bind: table))").all()
                    found += try info.map { (table, try $0.decode(column: "name", as: String.self)) }
                }
                columns = found
            } else {
                columns = try await db.raw(
                    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                ).all().map { (try $0.decode(column: "table_name", as: String.self), try $0.decode(column: "column_name", as: String.self)) }
            }
            #expect(columns.count > 20)
            var counts: [String: Int] = [:]
            for (table, column) in columns {
                let count = try await db.raw(
                    "SELECT COUNT(*) AS n FROM \(ident: table) WHERE LOWER(CAST(\(ident: column) AS TEXT)) LIKE \(bind: "%\(id.lowercased())%")"
                ).first()?.decode(column: "n", as: Int.self) ?? 0
                if count > 0 { counts[table, default: 0] += count }
            }
            return counts
        }
    }
}

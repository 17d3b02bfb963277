import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// What an instance keeps in memory is never served after a write that changed it has committed: the very next
/// request sees the write, on the instance that made it and, on PostgreSQL, on any other.
@Suite struct CacheTests {
    private static let postgres = ProcessInfo.processInfo.environment["FITBASE_TEST_POSTGRES_URL"] != nil

    @Test(arguments: TestEngines.all)
    func aSessionEndedAnyWayFailsOnItsVeryNextRequest(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            // Signing out: the token worked a moment ago (so the instance holds the session as live).
            let account = try await client.signUp()
            for _ in 0..<3 { #expect(try await client.json(.get, "/v1/me", token: account.accessToken).status == .ok) }
            #expect(try await client.json(.post, "/v1/auth/signout", token: account.accessToken).status == .noContent)
            let afterSignOut = try await client.json(.get, "/v1/me", token: account.accessToken)
            #expect(afterSignOut.status == .unauthorized)
            try expectProblem(afterSignOut, .sessionRevoked)

            // Ending another device's session from the sessions list.
            let phone = try await client.signIn(account)
            let tablet = try await client.signIn(account)
            #expect(try await client.json(.get, "/v1/me", token: tablet.accessToken).status == .ok)
            let tabletSession = try #require(try TokenClaims.session(of: tablet.accessToken))
            #expect(try await client.json(.delete, "/v1/me/sessions/\(tabletSession)", token: phone.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/me", token: tablet.accessToken).status == .unauthorized)
            #expect(try await client.json(.get, "/v1/me", token: phone.accessToken).status == .ok)

            // A refresh token presented twice ends its session: the access token that came with it stops too.
            let laptop = try await client.signIn(account)
            #expect(try await client.json(.get, "/v1/me", token: laptop.accessToken).status == .ok)
            #expect(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": laptop.refreshToken]).status == .ok)
            #expect(try await client.json(.post, "/v1/auth/refresh", body: ["refreshToken": laptop.refreshToken]).status == .unauthorized)
            #expect(try await client.json(.get, "/v1/me", token: laptop.accessToken).status == .unauthorized)

            // Deleting the account ends every session at once.
            #expect(try await client.json(.get, "/v1/me", token: phone.accessToken).status == .ok)
            #expect(try await client.json(.delete, "/v1/me", token: phone.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/me", token: phone.accessToken).status == .unauthorized)
        }
    }

    @Test(arguments: TestEngines.all)
    func aRoleChangeIsSeenByTheNextRequest(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let userID = try #require(UserID(account.id))
            #expect(try await client.json(.get, "/v1/me", token: account.accessToken).status == .ok)
            let adminOnly = "/v1/admin/workouts/\(WorkoutID())"
            #expect(try await client.json(.delete, adminOnly, token: account.accessToken).status == .forbidden)

            // `fitbase admin grant-role` runs in another process with a pool of its own.
            let database = app.database
            try await UserStore(database: database).setRole(.admin, for: userID, now: .storageNow)
            // PostgreSQL: at once. SQLite: within the second the instance trusts what it read.
            if engine == .sqlite { try await Task.sleep(for: CacheGenerations.sqliteRecheck + .milliseconds(50)) }
            #expect(try await client.json(.delete, adminOnly, token: account.accessToken).status == .notFound)
        }
    }

    @Test(.enabled(if: postgres, "needs FITBASE_TEST_POSTGRES_URL"))
    func aSessionEndedOnOneInstanceFailsOnTheOthersVeryNextRequest() async throws {
        try await Self.withTwoInstances { a, b, _ in
            let account = try await a.signUp()
            for _ in 0..<3 { #expect(try await b.json(.get, "/v1/me", token: account.accessToken).status == .ok) }
            #expect(try await a.json(.post, "/v1/auth/signout", token: account.accessToken).status == .noContent)
            #expect(try await b.json(.get, "/v1/me", token: account.accessToken).status == .unauthorized)
        }
    }

    // MARK: The catalog

    static var workoutBody: [String: Any] { [
        "title": "Cache Check", "description": "A workout that moves.", "type": "pilates", "durationMinutes": 10,
        "intensity": "medium", "phases": ["follicular"], "equipment": ["none"], "thumbnailURL": "https://cdn.example/c.jpg",
        "videoURL": "https://cdn.example/c.m3u8", "instructorName": "Ana Ruiz", "tags": ["core"], "isFeatured": false,
        "isPremium": false, "targetAreas": ["core"], "benefits": ["Stability"],
    ] }

    /// An account with the admin role, granted before its first request.
    static func admin(_ client: any TestClientProtocol, _ testDatabase: TestDatabase) async throws -> TestAccount {
        let admin = try await client.signUp()
        let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
        try await UserStore(database: database).setRole(.admin, for: try #require(UserID(admin.id)), now: .storageNow)
        try await database.shutdown()
        return admin
    }

    static func title(_ client: any TestClientProtocol, _ id: String) async throws -> String? {
        let response = try await client.json(.get, "/v1/workouts/\(id)")
        return response.status == .ok ? try json(response)["title"] as? String : nil
    }

    static func listed(_ client: any TestClientProtocol) async throws -> [String] {
        let page = try json(try await client.json(.get, "/v1/workouts?type=pilates&sort=shortest&limit=50"))
        return (page["items"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
    }

    @Test(arguments: TestEngines.all)
    func everyCatalogEditIsSeenByTheVeryNextRead(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let admin = try await Self.admin(client, app.testDatabase)
            #expect(try await Self.listed(client) == [])  // the (empty) catalog is now held in memory
            let created = try await client.json(.post, "/v1/admin/workouts", body: Self.workoutBody, token: admin.accessToken)
            let id = try #require(try json(created)["id"] as? String)
            #expect(try await Self.title(client, id) == "Cache Check")
            #expect(try await Self.listed(client) == ["Cache Check"])

            var renamed = Self.workoutBody
            renamed["title"] = "Cache Checked"
            #expect(try await client.json(.put, "/v1/admin/workouts/\(id)", body: renamed, token: admin.accessToken).status == .ok)
            #expect(try await Self.title(client, id) == "Cache Checked")
            #expect(try await Self.listed(client) == ["Cache Checked"])

            #expect(try await client.json(.delete, "/v1/admin/workouts/\(id)", token: admin.accessToken).status == .noContent)
            #expect(try await Self.title(client, id) == nil)
            #expect(try await Self.listed(client) == [])

            // `fitbase seed` writes from another process: PostgreSQL at once, SQLite within its recheck.
            let database = app.database
            let seeded = CatalogTests.fixture[1]
            try await CatalogImporter.importCatalog(([seeded], []), into: database, now: .storageNow)
            if engine == .sqlite { try await Task.sleep(for: CacheGenerations.sqliteRecheck + .milliseconds(50)) }
            #expect(try await Self.title(client, seeded.id.description) == seeded.title)
        }
    }

    @Test(.enabled(if: postgres, "needs FITBASE_TEST_POSTGRES_URL"))
    func aCatalogEditOnOneInstanceIsSeenByTheOthersVeryNextRead() async throws {
        try await Self.withTwoInstances { a, b, testDatabase in
            let admin = try await Self.admin(a, testDatabase)
            let created = try await a.json(.post, "/v1/admin/workouts", body: Self.workoutBody, token: admin.accessToken)
            let id = try #require(try json(created)["id"] as? String)
            #expect(try await Self.title(b, id) == "Cache Check")
            var renamed = Self.workoutBody
            renamed["title"] = "Cache Checked"
            #expect(try await a.json(.put, "/v1/admin/workouts/\(id)", body: renamed, token: admin.accessToken).status == .ok)
            #expect(try await Self.title(b, id) == "Cache Checked")
            #expect(try await Self.listed(b) == ["Cache Checked"])
            #expect(try await a.json(.delete, "/v1/admin/workouts/\(id)", token: admin.accessToken).status == .noContent)
            #expect(try await Self.title(b, id) == nil)
        }
    }

    /// Two instances, A and B, on one fresh PostgreSQL database with the same master key.
    static func withTwoInstances(
        _ test: @escaping @Sendable (any TestClientProtocol, any TestClientProtocol, TestDatabase) async throws -> Void
    ) async throws {
        try await TestDatabase.with(.postgres, migrated: true) { testDatabase in
            let masterKey = SharedKeysTests.randomMasterKey()
            try await SharedKeysTests.withDataDirectories(1) { directories in
                try await withApp(on: testDatabase, options: .instance(testDatabase.dataDirectory, masterKey: masterKey)) { a, _ async throws in
                    try await withApp(on: testDatabase, options: .instance(directories[0], masterKey: masterKey)) { b, _ async throws in
                        try await test(a, b, testDatabase)
                    }
                }
            }
        }
    }
}

/// Reads claims of an access token without verifying it (tests only).
enum TokenClaims {
    /// The `sid` claim.
    static func session(of token: String) throws -> String? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        guard let data = Data(base64Encoded: payload) else { return nil }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["sid"] as? String
    }
}

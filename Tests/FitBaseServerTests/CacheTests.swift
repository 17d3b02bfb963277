import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// What an instance keeps in memory is never served after a write that changed it has committed: the very next
/// request sees the write, on the instance that made it and, on PostgreSQL, on any other (sessions and roles) or once
/// its notification has arrived there (the catalog, remote config).
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
            if engine == .sqlite { try await Task.sleep(for: CacheGenerations.recheck + .milliseconds(50)) }
            #expect(try await client.json(.delete, adminOnly, token: account.accessToken).status == .notFound)
        }
    }

    @Test(.enabled(if: postgres, "needs FITBASE_TEST_POSTGRES_URL"))
    func aSessionEndedOnOneInstanceFailsOnTheOthersVeryNextRequest() async throws {
        try await Self.withTwoInstances { a, b, _, _ in
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
            if engine == .sqlite { try await Task.sleep(for: CacheGenerations.recheck + .milliseconds(50)) }
            #expect(try await Self.title(client, seeded.id.description) == seeded.title)
        }
    }

    /// Another instance's catalog edit reaches this one by notification: within milliseconds, and never later than the
    /// generation's recheck.
    @Test(.enabled(if: postgres, "needs FITBASE_TEST_POSTGRES_URL"))
    func aCatalogEditOnOneInstanceIsSeenByTheOthersNextReadsOnceNotified() async throws {
        try await Self.withTwoInstances { a, b, testDatabase, appB in
            try await Self.untilListening(appB)
            let admin = try await Self.admin(a, testDatabase)
            #expect(try await Self.listed(b) == [])  // B holds the (empty) catalog and trusts its generation
            let created = try await a.json(.post, "/v1/admin/workouts", body: Self.workoutBody, token: admin.accessToken)
            let id = try #require(try json(created)["id"] as? String)
            try await Self.expectSoon { try await Self.title(b, id) == "Cache Check" }
            var renamed = Self.workoutBody
            renamed["title"] = "Cache Checked"
            #expect(try await a.json(.put, "/v1/admin/workouts/\(id)", body: renamed, token: admin.accessToken).status == .ok)
            try await Self.expectSoon { try await Self.title(b, id) == "Cache Checked" }
            try await Self.expectSoon { try await Self.listed(b) == ["Cache Checked"] }
            #expect(try await a.json(.delete, "/v1/admin/workouts/\(id)", token: admin.accessToken).status == .noContent)
            try await Self.expectSoon { try await Self.title(b, id) == nil }
        }
    }

    /// Without its listener an instance trusts no generation of another's data: it reads the row before every read,
    /// so another instance's edit is seen by its very next read.
    @Test(.enabled(if: postgres, "needs FITBASE_TEST_POSTGRES_URL"))
    func withoutAListenerEveryReadAsksForTheGeneration() async throws {
        try await TestDatabase.with(.postgres, migrated: true) { testDatabase in
            let a = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let b = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            do {
                #expect(!b.generations.isListening)
                let before = try await b.generations.current(.catalog, on: b)
                #expect(b.generations.trusted(.catalog) == nil)
                try await a.transaction { db in try await CacheGenerations.bump(.catalog, on: db) }
                #expect(try await b.generations.current(.catalog, on: b) == before + 1)
            } catch {
                try await a.shutdown()
                try await b.shutdown()
                throw error
            }
            try await a.shutdown()
            try await b.shutdown()
        }
    }

    /// `condition` holds within the generation's recheck (polled; notifications usually make it hold at once).
    static func expectSoon(_ condition: () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + CacheGenerations.recheck + .milliseconds(200)
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("not seen within the recheck", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits (up to 10 s) for `app`'s cache generation listener to hear bumps (PostgreSQL; at once on SQLite).
    static func untilListening(_ app: TestApp) async throws {
        guard app.database.engine == .postgres else { return }
        let deadline = ContinuousClock.now + .seconds(10)
        while !app.database.generations.isListening {
            try #require(ContinuousClock.now < deadline, "the cache generation listener never started")
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Two instances, A and B, on one fresh PostgreSQL database with the same master key.
    static func withTwoInstances(
        _ test: @escaping @Sendable (any TestClientProtocol, any TestClientProtocol, TestDatabase, TestApp) async throws -> Void
    ) async throws {
        try await TestDatabase.with(.postgres, migrated: true) { testDatabase in
            let masterKey = SharedKeysTests.randomMasterKey()
            try await SharedKeysTests.withDataDirectories(1) { directories in
                try await withApp(on: testDatabase, options: .instance(testDatabase.dataDirectory, masterKey: masterKey)) { a, _ async throws in
                    try await withApp(on: testDatabase, options: .instance(directories[0], masterKey: masterKey)) { b, appB async throws in
                        try await test(a, b, testDatabase, appB)
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

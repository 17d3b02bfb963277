import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import SQLKit
import Testing

@testable import FitBaseServer

/// Instances that share one database share its keys: the access-token signing keys live in the database sealed by the
/// master key, and every instance must hold that master key.
@Suite struct SharedKeysTests {
    static let postgres = TestEngines.all.contains(.postgres)

    @Test(.enabled(if: postgres, "needs FITBASE_TEST_POSTGRES_URL"))
    func twoInstancesOnOnePostgreSQLDatabaseShareSessionsAndHealthDataAndARotationSignsNobodyOut() async throws {
        try await TestDatabase.with(.postgres, migrated: true) { testDatabase in
            let masterKey = Self.randomMasterKey()
            try await Self.withDataDirectories(2) { directories in
                try await withApp(on: testDatabase, options: .instance(testDatabase.dataDirectory, masterKey: masterKey)) { a, appA async throws in
                    try await withApp(on: testDatabase, options: .instance(directories[0], masterKey: masterKey)) { b, _ async throws in
                        let account = try await a.signUp()
                        let firstKey = try #require(Self.keyID(of: account.accessToken))
                        #expect(try await b.json(.get, "/v1/me", token: account.accessToken).status == .ok)

                        let refreshed = try await b.json(.post, "/v1/auth/refresh", body: ["refreshToken": account.refreshToken])
                        #expect(refreshed.status == .ok)
                        let renewed = try #require(try json(refreshed)["accessToken"] as? String)
                        #expect(Self.keyID(of: renewed) == firstKey)
                        #expect(try await a.json(.get, "/v1/me", token: renewed).status == .ok)

                        try await HealthTests.consent(a, renewed)
                        let uploaded = try await HealthTests.upload(a, renewed, [
                            HealthTests.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 64, "unit": "count/min"]),
                            HealthTests.sample("steps", start: "2026-11-20T08:00:00Z", end: "2026-11-20T08:30:00Z", ["value": 1800, "unit": "count"]),
                        ])
                        #expect(try json(uploaded)["created"] as? Int == 2)
                        let readBack = try #require(try json(try await b.json(.get, "/v1/health/samples", token: renewed))["items"] as? [[String: Any]])
                        #expect(Set(readBack.compactMap { $0["value"] as? Double }) == [64, 1800])

                        // A rotation made elsewhere (`fitbase keys rotate-signing`) signs nobody out.
                        let rotation = try await SigningKeyAdministration(configuration: appA.configuration, logger: TestDatabase.logger).rotateSigningKey(now: .storageNow)
                        #expect(rotation.demotedKeyIDs == [firstKey])
                        #expect(rotation.currentKeyID != firstKey)
                        #expect(try await a.json(.get, "/v1/me", token: renewed).status == .ok)
                        #expect(try await b.json(.get, "/v1/me", token: renewed).status == .ok)

                        // An instance started after the rotation signs with the new key, and the running ones accept
                        // its tokens at once (an unknown kid makes them read the keys again) and sign with it after.
                        try await withApp(on: testDatabase, options: .instance(directories[1], masterKey: masterKey)) { c, _ async throws in
                            let signedInOnC = try await c.signIn(account)
                            #expect(Self.keyID(of: signedInOnC.accessToken) == rotation.currentKeyID)
                            #expect(try await c.json(.get, "/v1/me", token: renewed).status == .ok)
                            for client in [a, b] {
                                #expect(try await client.json(.get, "/v1/me", token: signedInOnC.accessToken).status == .ok)
                                let signedIn = try await client.signIn(account)
                                #expect(Self.keyID(of: signedIn.accessToken) == rotation.currentKeyID)
                            }
                            for client in [a, b, c] {
                                #expect(try await Self.publishedKeyIDs(client) == [rotation.currentKeyID, firstKey])
                                #expect(try await client.json(.get, "/v1/me", token: renewed).status == .ok)
                            }
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func anInstanceWithAnotherMasterKeyRefusesToStart(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            try await Self.withDataDirectories(2) { directories in
                let deployment = TestAppOptions.instance(testDatabase.dataDirectory, masterKey: Self.randomMasterKey())
                try await withApp(on: testDatabase, options: deployment) { client, _ in _ = try await client.signUp() }

                // Another key given, and a key generated into a fresh data directory.
                let other = Self.configuration(testDatabase, dataDirectory: directories[0], masterKey: Self.randomMasterKey())
                let generated = Self.configuration(testDatabase, dataDirectory: directories[1], masterKey: nil)
                for configuration in [other, generated] {
                    do {
                        _ = try await buildApplication(configuration: configuration, logger: TestDatabase.logger)
                        Issue.record("an instance started with another master key")
                    } catch {
                        let message = "\(error)"
                        #expect(message.contains("FITBASE_MASTER_KEY"))
                        #expect(!message.contains("\n"))
                    }
                }
                // The instance with the deployment's key still starts.
                try await withApp(on: testDatabase, options: deployment) { client, _ async throws in
                    #expect(try await client.json(.get, "/healthz").status == .ok)
                }
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func aMasterKeyRotationReSealsTheSigningKeysAndReplacesTheDatabasesRecord(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            let (account, configuration) = try await withApp(on: testDatabase) { client, app in (try await client.signUp(), app.configuration) }
            let newKey = URL(fileURLWithPath: testDatabase.dataDirectory).appendingPathComponent("master-next.key").path
            let rotation = try await HealthAdministration(configuration: configuration, logger: TestDatabase.logger, clock: .system).rotateMasterKey(to: newKey)
            #expect(rotation.signingKeys == 1)
            #expect(rotation.healthKeys == 0)

            do {
                _ = try await buildApplication(configuration: configuration, logger: TestDatabase.logger)
                Issue.record("the old master key still starts the server")
            } catch {
                #expect("\(error)".contains("FITBASE_MASTER_KEY"))
            }
            try await withApp(on: testDatabase, options: .init(configure: { $0.identityProviders.masterKeyFile = newKey })) { client, _ async throws in
                #expect(try await client.json(.get, "/v1/me", token: account.accessToken).status == .ok)
            }
        }
    }

    @Test(.enabled(if: postgres, "needs FITBASE_TEST_POSTGRES_URL"))
    func instancesStartingTogetherOnAnEmptyDatabaseAgreeOnOneCurrentKey() async throws {
        try await TestDatabase.with(.postgres) { testDatabase in  // empty: the instances migrate it together
            let masterKey = Self.randomMasterKey()
            let instances = 4
            try await Self.withDataDirectories(instances) { directories in
                let published = try await withThrowingTaskGroup(of: [String].self) { group in
                    for directory in directories {
                        group.addTask {
                            try await withApp(on: testDatabase, options: .instance(directory, masterKey: masterKey)) { client, _ async throws in
                                let account = try await client.signUp()
                                return try await Self.publishedKeyIDs(client) + [Self.keyID(of: account.accessToken) ?? ""]
                            }
                        }
                    }
                    return try await group.reduce(into: [[String]]()) { $0.append($1) }
                }
                #expect(published.count == instances)
                let first = try #require(published.first)
                #expect(first.count == 2 && first[0] == first[1])
                #expect(published.allSatisfy { $0 == first })

                let rows = try await Self.signingKeyRows(testDatabase)
                #expect(rows.count == 1)
                #expect(rows.first?.kid == first[0] && rows.first?.state == .current)
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func aSigningKeyFileFromBeforeTheUpgradeIsImportedSoItsTokensStayValid(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            let masterKey = Self.randomMasterKey()
            try await Self.withDataDirectories(1) { directories in
                // What an older version left in the data directory.
                let legacy = ES256PrivateKey()
                let file = try Self.writeLegacyKey(legacy, into: testDatabase.dataDirectory)
                let deployment = TestAppOptions.instance(testDatabase.dataDirectory, masterKey: masterKey)
                let issuer = ServerConfiguration.testing(testDatabase).publicURL
                let oldSigner = await SessionTokenSigner(key: legacy, issuer: issuer)

                let (account, beforeUpgrade) = try await withApp(on: testDatabase, options: deployment) { client, _ async throws in
                    let account = try await client.signUp()
                    // The imported key is the current one.
                    let claims = try await oldSigner.verify(account.accessToken)
                    // A token as the old version signed it, a while ago.
                    let beforeUpgrade = try await oldSigner.issue(
                        user: claims.user, session: claims.session, authenticatedAt: .now.addingTimeInterval(-600), now: .now.addingTimeInterval(-600)
                    ).token
                    #expect(try await client.json(.get, "/v1/me", token: beforeUpgrade).status == .ok)
                    return (account, beforeUpgrade)
                }
                #expect(!FileManager.default.fileExists(atPath: file), "the imported key file is removed")
                let rows = try await Self.signingKeyRows(testDatabase)
                #expect(rows.map(\.kid) == [SigningKey.keyID(of: legacy.publicKey)])
                #expect(rows.allSatisfy { !String(decoding: $0.sealedPrivateKey, as: UTF8.self).contains("PRIVATE KEY") })

                // Another instance that kept its own key (PostgreSQL deployments ran one per instance): imported as a
                // previous key, so its tokens stay valid too, everywhere.
                let otherLegacy = ES256PrivateKey()
                try Self.writeLegacyKey(otherLegacy, into: directories[0])
                let otherToken = try await SessionTokenSigner(key: otherLegacy, issuer: issuer)
                    .issue(user: try await oldSigner.verify(account.accessToken).user, session: try await oldSigner.verify(account.accessToken).session,
                           authenticatedAt: .now, now: .now).token
                try await withApp(on: testDatabase, options: .instance(directories[0], masterKey: masterKey)) { client, _ async throws in
                    #expect(try await client.json(.get, "/v1/me", token: beforeUpgrade).status == .ok)
                    #expect(try await client.json(.get, "/v1/me", token: otherToken).status == .ok)
                    #expect(Self.keyID(of: try await client.signIn(account).accessToken) == SigningKey.keyID(of: legacy.publicKey))
                }
                // After a restart, without the files.
                try await withApp(on: testDatabase, options: deployment) { client, _ async throws in
                    #expect(try await client.json(.get, "/v1/me", token: beforeUpgrade).status == .ok)
                    #expect(try await client.json(.get, "/v1/me", token: otherToken).status == .ok)
                    #expect(try await Self.publishedKeyIDs(client).count == 2)
                }
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func rotationsKeepThePreviousKeysForAnHourThenRetireThem(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            let deployment = TestAppOptions.instance(testDatabase.dataDirectory, masterKey: Self.randomMasterKey())
            let (account, configuration) = try await withApp(on: testDatabase, options: deployment) { client, app async throws in
                (try await client.signUp(), app.configuration)
            }
            let administration = SigningKeyAdministration(configuration: configuration, logger: TestDatabase.logger)
            let start = Date.storageNow
            let first = try await administration.rotateSigningKey(now: start)
            let second = try await administration.rotateSigningKey(now: start.addingTimeInterval(600))
            #expect(second.retiredKeyIDs.isEmpty)
            let secondToken = try await withApp(on: testDatabase, options: deployment) { client, _ async throws in
                // Three keys verify: the one current at sign-up and the first rotation's are previous.
                #expect(try await Self.publishedKeyIDs(client).count == 3)
                #expect(try await client.json(.get, "/v1/me", token: account.accessToken).status == .ok)
                return try await client.signIn(account).accessToken
            }
            #expect(Self.keyID(of: secondToken) == second.currentKeyID)

            let third = try await administration.rotateSigningKey(now: start.addingTimeInterval(2 * 3600))
            #expect(Set(third.retiredKeyIDs) == [Self.keyID(of: account.accessToken), first.currentKeyID])
            #expect(third.demotedKeyIDs == [second.currentKeyID])
            try await withApp(on: testDatabase, options: deployment) { client, _ async throws in
                #expect(try await Self.publishedKeyIDs(client) == [third.currentKeyID, second.currentKeyID])
                #expect(try await client.json(.get, "/v1/me", token: secondToken).status == .ok)
                try expectProblem(try await client.json(.get, "/v1/me", token: account.accessToken), .invalidToken)
            }
            #expect(try await Self.signingKeyRows(testDatabase).map(\.state).filter { $0 == .retired }.count == 2)
        }
    }

    @Test(arguments: TestEngines.all)
    func aRunningSignerTakesUpARotationMadeElsewhereWithoutHammeringTheDatabase(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            do {
                try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
                let keys = SigningKeys(
                    store: SigningKeyStore(database: database), masterKey: try MasterKey.load(environmentValue: Self.randomMasterKey(), file: ""),
                    legacyKeyFile: nil,
                    logger: TestDatabase.logger
                )
                // Unknown kids may make this signer read the keys once an hour: the first one does.
                let signer = SessionTokenSigner(keys: keys, issuer: "https://fitbase.test", unknownKeyLookupInterval: .seconds(3600))
                try await signer.load()
                let (user, session) = (UserID(), SessionID())
                let before = try await signer.issue(user: user, session: session, authenticatedAt: .now, now: .now).token
                func issued(after rotation: SigningKeyRotation) async throws -> String {
                    let elsewhere = SessionTokenSigner(keys: keys, issuer: "https://fitbase.test")
                    try await elsewhere.load()
                    let token = try await elsewhere.issue(user: user, session: session, authenticatedAt: .now, now: .now).token
                    #expect(Self.keyID(of: token) == rotation.currentKeyID)
                    return token
                }

                // A token signed by a key rotated in elsewhere makes the signer read the keys, and sign with the new one.
                let rotation = try await keys.rotate(now: .storageNow)
                let after = try await issued(after: rotation)
                #expect(try await signer.verify(after).user == user)
                #expect(try await signer.verify(before).user == user)
                let renewed = try await signer.issue(user: user, session: session, authenticatedAt: .now, now: .now).token
                #expect(Self.keyID(of: renewed) == rotation.currentKeyID)

                // Further unknown kids, forged or not, wait their turn instead of each costing a read.
                let forged = try await SessionTokenSigner(key: ES256PrivateKey(), issuer: "https://fitbase.test")
                    .issue(user: user, session: session, authenticatedAt: .now, now: .now).token
                await #expect(throws: Problem.self) { try await signer.verify(forged) }
                let next = try await keys.rotate(now: .storageNow)
                let later = try await issued(after: next)
                await #expect(throws: Problem.self) { try await signer.verify(later) }

                // The minute's refresh takes the rotation up without any token's help.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await PeriodicService.signingKeyRefresh(signer, logger: TestDatabase.logger, every: .milliseconds(50)).run() }
                    var signing = ""
                    var waited = 0
                    while signing != next.currentKeyID, waited < 200 {
                        try await Task.sleep(for: .milliseconds(50))
                        waited += 1
                        signing = Self.keyID(of: try await signer.issue(user: user, session: session, authenticatedAt: .now, now: .now).token) ?? ""
                    }
                    #expect(signing == next.currentKeyID)
                    group.cancelAll()
                }
                #expect(try await signer.verify(later).user == user)
                #expect(try await signer.verify(after).user == user)

                // Tokens verified before (and remembered) stop verifying once their key is retired and the signer
                // has read the keys again.
                #expect(try await signer.verify(before).user == user)
                _ = try await keys.rotate(now: Date.storageNow.addingTimeInterval(2 * 3600))
                try await signer.reload()
                await #expect(throws: Problem.self) { try await signer.verify(before) }
                await #expect(throws: Problem.self) { try await signer.verify(after) }
                #expect(try await signer.verify(later).user == user)
                try await database.shutdown()
            } catch {
                try? await database.shutdown()
                throw error
            }
        }
    }

    // MARK: - Helpers

    static func randomMasterKey() -> String {
        Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    /// The test configuration with its own data directory and master key (`nil`: the data directory's key file).
    static func configuration(_ testDatabase: TestDatabase, dataDirectory: String, masterKey: String?) -> ServerConfiguration {
        var providers = IdentityProvidersConfiguration()
        providers.masterKey = masterKey
        var configuration = ServerConfiguration.testing(testDatabase, identityProviders: providers)
        configuration.dataDirectory = dataDirectory
        return configuration
    }

    /// Runs `body` with `count` more temporary data directories, removed afterwards.
    static func withDataDirectories<Result>(_ count: Int, _ body: ([String]) async throws -> Result) async throws -> Result {
        let directories = (0..<count).map { _ in
            FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-test-\(UUID().uuidString.prefix(8))").path
        }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        for directory in directories { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        return try await body(directories)
    }

    /// Writes `key` where versions before the keys moved into the database kept it.
    @discardableResult
    static func writeLegacyKey(_ key: ES256PrivateKey, into directory: String) throws -> String {
        let path = SigningKeys.legacyKeyFile(in: directory)
        try #require(FileManager.default.createFile(atPath: path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }

    /// The `kid` in a JWT's header.
    static func keyID(of token: String) -> String? {
        guard let header = token.split(separator: ".").first, let data = Data(base64URLEncoded: String(header)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["kid"] as? String
    }

    static func publishedKeyIDs(_ client: any TestClientProtocol) async throws -> [String] {
        let response = try await client.execute(uri: "/.well-known/jwks.json", method: .get)
        #expect(response.status == .ok)
        return (try json(response)["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String }
    }

    static func signingKeyRows(_ testDatabase: TestDatabase) async throws -> [SigningKeyStore.StoredKey] {
        let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
        do {
            let rows = try await database.withConnection { db in try await SigningKeyStore.allKeys(on: db) }
            try await database.shutdown()
            return rows
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}

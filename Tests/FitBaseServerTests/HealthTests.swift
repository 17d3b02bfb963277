import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Crypto
import SQLKit
import Testing

@testable import FitBaseServer

/// Health samples over HTTP: consent, validation per sample, encryption at rest, crypto-shredding, summaries, the
/// audit chain and sync, on every engine.
@Suite struct HealthTests {
    static func sample(_ type: String, id: UUID = UUID(), start: String, end: String? = nil, _ fields: [String: Any] = [:]) -> [String: Any] {
        var sample: [String: Any] = ["id": id.uuidString, "type": type, "start": start, "sourceId": "com.apple.health.watch"]
        if let end { sample["end"] = end }
        return sample.merging(fields) { $1 }
    }

    /// The sealed form keeps metadata exactly, whatever its strings hold, and reads metadata stored by the earlier
    /// `JSONSerialization` encoding.
    @Test func metadataSurvivesTheSealedEncoding() throws {
        let metadata = [
            "HKMetadataKeyHeartRateMotionContext": "1", "quote \" and \\ backslash": "a/b ✓ \u{1F3CB}", "controls": "\n\r\t\u{0}\u{1}\u{1F}",
            "": "", "é": "\u{7F}",
        ]
        let sample = HealthSample(id: HealthSampleID(), value: .heartRate(beatsPerMinute: 61), start: Date(timeIntervalSince1970: 1_800_000_000), sourceId: "s", device: "d", metadata: metadata)
        let decoded = try HealthSampleCodec.decode(HealthSampleCodec.encode(sample))
        #expect(decoded.metadata == metadata)
        #expect(decoded.device == "d" && decoded.sourceID == "s" && decoded.value == .heartRate(beatsPerMinute: 61))
        #expect(try HealthSampleCodec.decode(HealthSampleCodec.encode(HealthSample(id: HealthSampleID(), value: .steps(count: 3), start: .now, sourceId: "s"))).metadata == nil)
        // Bytes as the earlier encoder wrote them: the same layout, metadata by JSONSerialization.
        var legacy = Array(HealthSampleCodec.encode(HealthSample(id: HealthSampleID(), value: .heartRate(beatsPerMinute: 61), start: .now, sourceId: "s", device: "d")))
        legacy.removeLast(4)
        let json = Array(try JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys]))
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { legacy.append(contentsOf: $0) }
        legacy.append(contentsOf: json)
        #expect(try HealthSampleCodec.decode(Data(legacy)).metadata == metadata)
    }

    /// Nonces drawn for a batch at once are as random as one at a time: none repeats, and none is all zeros.
    @Test func aBatchsNoncesAreDistinct() throws {
        let nonces = try HealthVault.nonces(5_000).map { Array($0) }
        #expect(nonces.count == 5_000 && nonces.allSatisfy { $0.count == 12 && $0 != [UInt8](repeating: 0, count: 12) })
        #expect(Set(nonces).count == 5_000)
        var bytes = [UInt8](repeating: 0, count: 100_000)
        try SecureRandom.fill(&bytes)
        #expect(Set(bytes).count == 256)
    }

    static func consent(_ client: any TestClientProtocol, _ token: String, granted: Bool = true) async throws {
        let response = try await client.json(.post, "/v1/me/consents", body: ["kind": "healthData", "version": "2026-11", "granted": granted], token: token)
        try #require(response.status == .created)
    }

    static func upload(_ client: any TestClientProtocol, _ token: String, _ samples: [[String: Any]]) async throws -> TestResponse {
        try await client.json(.post, "/v1/health/samples", body: ["samples": samples], token: token)
    }

    @Test(arguments: TestEngines.all)
    func samplesNeedConsentAreCheckedOneByOneAndStoredOnce(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let token = account.accessToken
            let heart = UUID()
            let batch: [[String: Any]] = [
                Self.sample("heartRate", id: heart, start: "2026-11-20T08:00:00Z", ["value": 1.2, "unit": "count/s"]),
                Self.sample("steps", start: "2026-11-20T08:00:00Z", end: "2026-11-20T08:30:00Z", ["value": 2400, "unit": "count"]),
                Self.sample("sleep", start: "2026-11-19T23:00:00Z", end: "2026-11-20T06:30:00Z", ["stage": "asleepCore"]),
                Self.sample("oxygenSaturation", start: "2026-11-20T08:01:00Z", ["value": 0.97, "unit": "%"]),
                Self.sample("bloodPressure", start: "2026-11-20T08:02:00Z", ["systolic": 16, "diastolic": 10.5, "unit": "kPa"]),
                Self.sample("heartRate", start: "2026-11-20T08:03:00Z", ["value": 400, "unit": "count/min"]),
                Self.sample("glucose", start: "2026-11-20T08:04:00Z", ["value": 5.5]),
            ]
            let refused = try await Self.upload(client, token, batch)
            #expect(refused.status == .forbidden)
            try expectProblem(refused, .consentRequired)

            try await Self.consent(client, token)
            let uploaded = try json(try await Self.upload(client, token, batch))
            #expect(uploaded["created"] as? Int == 5 && uploaded["rejected"] as? Int == 2)
            let results = try #require(uploaded["results"] as? [[String: Any]])
            #expect(results.map { $0["status"] as? String } == ["created", "created", "created", "created", "created", "rejected", "rejected"])
            let impossible = try #require(results[5]["problem"] as? [String: Any])
            #expect((impossible["errors"] as? [[String: Any]])?.first?["field"] as? String == "samples[5].value")
            #expect(((results[6]["problem"] as? [String: Any])?["errors"] as? [[String: Any]])?.first?["field"] as? String == "samples[6].type")

            let tooMany = (0...HealthRecords.maximumBatch).map { _ in Self.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 60]) }
            let refusedBatch = try await Self.upload(client, token, tooMany)
            #expect(refusedBatch.status == .badRequest)
            #expect((try json(refusedBatch)["errors"] as? [[String: Any]])?.first?["field"] as? String == "samples")

            let again = try json(try await Self.upload(client, token, Array(batch.prefix(2))))
            #expect(again["duplicates"] as? Int == 2 && again["created"] as? Int == 0)

            let listed = try #require(try json(try await client.json(.get, "/v1/health/samples?limit=100", token: token))["items"] as? [[String: Any]])
            #expect(listed.count == 5)
            let byType = Dictionary(uniqueKeysWithValues: listed.map { ($0["type"] as? String ?? "", $0) })
            #expect(byType["heartRate"]?["value"] as? Double == 72 && byType["heartRate"]?["unit"] as? String == "count/min")
            #expect(byType["oxygenSaturation"]?["value"] as? Double == 97)
            #expect(abs((byType["bloodPressure"]?["systolic"] as? Double ?? 0) - 120.01) < 0.01)
            #expect(byType["sleep"]?["stage"] as? String == "asleepCore")
            #expect(byType["steps"]?["sourceId"] as? String == "com.apple.health.watch")

            // Withdrawn: no new uploads, but what was stored stays readable and deletable.
            try await Self.consent(client, token, granted: false)
            #expect(try await Self.upload(client, token, [Self.sample("heartRate", start: "2026-11-20T09:00:00Z", ["value": 60])]).status == .forbidden)
            #expect(try await client.json(.get, "/v1/health/samples", token: token).status == .ok)
            #expect(try await client.json(.delete, "/v1/health/samples/\(heart)", token: token).status == .noContent)
            #expect(try await client.json(.delete, "/v1/health/samples/\(heart)", token: token).status == .notFound)

            let other = try await client.signUp()
            try await Self.consent(client, other.accessToken)
            #expect((try json(try await client.json(.get, "/v1/health/samples", token: other.accessToken))["items"] as? [Any])?.isEmpty == true)
            let stolenID = try await Self.upload(client, other.accessToken, [Self.sample("heartRate", id: UUID(uuidString: listed[0]["id"] as? String ?? "")!, start: "2026-11-20T10:00:00Z", ["value": 60])])
            #expect((try json(stolenID)["results"] as? [[String: Any]])?.first?["status"] as? String == "rejected")
            #expect(try await client.json(.delete, "/v1/health/samples/\(listed[0]["id"] as? String ?? "")", token: other.accessToken).status == .notFound)
        }
    }

    @Test(arguments: TestEngines.all)
    func nothingReadableIsStoredAndADeletedAccountCannotBeDecryptedFromACopy(engine: DatabaseEngine) async throws {
        let marker = "MARKER-\(UUID().uuidString.prefix(8))"
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            try await Self.consent(client, account.accessToken)
            let uploaded = try json(try await Self.upload(client, account.accessToken, [
                Self.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 123.456, "device": "Watch \(marker)", "metadata": ["note": "note \(marker)"]]),
                Self.sample("bloodPressure", start: "2026-11-20T08:05:00Z", ["systolic": 141.25, "diastolic": 93.75, "sourceId": "com.\(marker.lowercased()).bp"]),
            ]))
            #expect(uploaded["created"] as? Int == 2)

            let database = app.database
            try await SealedCycleDataTests.expectUnreadable(
                [marker, marker.lowercased(), "123.456", "141.25", "93.75"], engine: engine, in: database, at: app.testDatabase
            )

            // A copy of the sealed rows taken before deletion…
            let user = UserID(rawValue: try #require(UUID(uuidString: account.id)))
            let copy = try await database.withConnection { db in try await HealthSampleStore.all(of: user, on: db) }
            #expect(copy.count == 2)
            #expect(try await client.json(.delete, "/v1/me", token: account.accessToken).status == .noContent)
            // …cannot be opened afterwards: the data key is gone from the key store, wherever the copy went.
            let keystore = ServerConfiguration.testing(app.testDatabase).keystoreLocation
            let keysDatabase = keystore == app.testDatabase.location ? database : try await Database.open(keystore, logger: TestDatabase.logger)
            let masterKey = try MasterKey.load(for: .testing(app.testDatabase))
            let vault = HealthVault(keys: HealthKeyStore(database: keysDatabase, clock: .system), masterKey: masterKey)
            #expect(try await vault.dataKey(of: user, creating: false) == nil)
            let guessed = try #require(try await vault.dataKey(of: UserID(), creating: true))  // any other key
            for row in copy {
                #expect(throws: (any Error).self) {
                    try vault.open(row.sealed, with: guessed, binding: SealedSample.binding(user: user, id: row.id, type: row.type, start: row.start, end: row.end))
                }
            }
            // The audit trail survives, naming the account by id only.
            let trail = try await AuditLog(database: database, clock: .system).entries(about: user, offset: 0, limit: 50)
            #expect(trail.contains { $0.action == "delete" && $0.resource == "healthKey" && $0.count == 2 })
            #expect(try await AuditLog(database: database, clock: .system).verify().firstBreak == nil)
            if keysDatabase !== database { try await keysDatabase.shutdown() }
        }
    }

    /// A pushed sample whose id another user stored after the push read the owners (PostgreSQL: committed in between)
    /// is refused as `id_taken`; the pusher gets no feed entry for it and the other user's row is untouched.
    @Test(arguments: TestEngines.all)
    func aPushedSampleWhoseIdAnotherUserJustStoredIsRefused(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let id = UUID()
            let (owner, pusher) = try await withApp(on: testDatabase) { client, _ in
                let owner = try await client.signUp()
                let pusher = try await client.signUp()
                try await Self.consent(client, owner.accessToken)
                #expect(try await Self.upload(client, owner.accessToken, [Self.sample("heartRate", id: id, start: "2026-11-20T08:00:00Z", ["value": 61])]).status == .ok)
                return (try #require(UUID(uuidString: owner.id)), try #require(UUID(uuidString: pusher.id)))
            }
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let keystore = ServerConfiguration.testing(testDatabase).keystoreLocation
            let keysDatabase = keystore == testDatabase.location ? database : try await Database.open(keystore, logger: TestDatabase.logger)
            let vault = HealthVault(keys: HealthKeyStore(database: keysDatabase, clock: .system), masterKey: try MasterKey.load(for: .testing(testDatabase)))
            let records = HealthRecords(
                database: database, store: HealthSampleStore(database: database), vault: vault, audit: AuditLog(database: database, clock: .system),
                consents: ConsentStore(database: database)
            )
            let user = UserID(rawValue: pusher)
            let key = try #require(try await vault.dataKey(of: user, creating: true))
            let sample = HealthSample(id: HealthSampleID(rawValue: id), value: .heartRate(beatsPerMinute: 99), start: Date(timeIntervalSince1970: 1_800_000_000), sourceId: "s")
            let write = HealthSampleWrite(batch: try records.seal([sample], of: user, with: key), vault: vault)
            await #expect(throws: RecordIDTaken.self) {
                try await database.transaction { db in _ = try await write.write(.created(user, .storageNow), on: db) }
            }
            let (stamp, rows) = try await database.withConnection { db in
                (
                    try await SyncFeed.stamp(.healthSamples, id: HealthSampleID(rawValue: id).description, of: user, on: db),
                    try await db.select().column("user_id").from("health_samples").where("id", .equal, id).all()
                        .map { try $0.decode(column: "user_id", as: UUID.self) }
                )
            }
            #expect(stamp == nil)
            #expect(rows == [owner])
            if keysDatabase !== database { try await keysDatabase.shutdown() }
            try await database.shutdown()
        }
    }

    @Test(arguments: TestEngines.all)
    func aWrongMasterKeyStopsStartUpNamingTheSetting(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            try await withApp(on: testDatabase) { client, _ in
                let account = try await client.signUp()
                try await Self.consent(client, account.accessToken)
                #expect(try await Self.upload(client, account.accessToken, [Self.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 61])]).status == .ok)
            }
            var providers = IdentityProvidersConfiguration()
            providers.masterKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            do {
                _ = try await buildApplication(configuration: .testing(testDatabase, identityProviders: providers), logger: TestDatabase.logger)
                Issue.record("the server started with the wrong master key")
            } catch {
                #expect("\(error)".contains("FITBASE_MASTER_KEY"))
                #expect("\(error)".contains("fitbase keys rotate"))
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func aRotatedMasterKeyReadsEverySampleAndTheOldOneNoLongerStarts(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let account = try await withApp(on: testDatabase) { client, _ in
                let account = try await client.signUp()
                try await Self.consent(client, account.accessToken)
                _ = try await Self.upload(client, account.accessToken, [Self.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 66])])
                return account
            }
            let newKey = URL(fileURLWithPath: testDatabase.dataDirectory).appendingPathComponent("master-next.key").path
            let rotation = try await HealthAdministration(configuration: .testing(testDatabase), logger: TestDatabase.logger, clock: .system).rotateMasterKey(to: newKey)
            #expect(rotation.healthKeys == 1)
            await #expect(throws: (any Error).self) { _ = try await buildApplication(configuration: .testing(testDatabase), logger: TestDatabase.logger) }
            var providers = IdentityProvidersConfiguration()
            providers.masterKeyFile = newKey
            try await withApp(on: testDatabase, options: .init(identityProviders: providers)) { client, _ in
                let signedIn = try await client.signIn(account)
                let items = try json(try await client.json(.get, "/v1/health/samples", token: signedIn.accessToken))["items"] as? [[String: Any]]
                #expect(items?.first?["value"] as? Double == 66)
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func summariesFollowTheUsersLocalDaysAcrossDST(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let account = try await client.signUp()
            let token = account.accessToken
            try await client.json(.patch, "/v1/me", body: ["timeZone": "America/New_York"], token: token)
            try await Self.consent(client, token)
            let uploaded = try json(try await Self.upload(client, token, [
                // 2026-11-01 is a 25-hour day in New York (04:00Z … 05:00Z next day): 01:00 EDT → 23:30 EST is 23.5 h of it.
                Self.sample("steps", start: "2026-11-01T05:00:00Z", end: "2026-11-02T04:30:00Z", ["value": 25_000]),
                // Across local midnight of the 2nd: 23:00 EST (04:00Z) → 01:00 EST (06:00Z): half on each day.
                Self.sample("steps", start: "2026-11-03T04:00:00Z", end: "2026-11-03T06:00:00Z", ["value": 1_000]),
                Self.sample("heartRate", start: "2026-11-01T12:00:00Z", ["value": 60]),
                Self.sample("heartRate", start: "2026-11-01T13:00:00Z", ["value": 80]),
                Self.sample("heartRate", start: "2026-11-02T04:59:00Z", ["value": 100]),  // 23:59 EST on the 1st
            ]))
            #expect(uploaded["created"] as? Int == 5)
            func summary(_ query: String) async throws -> [[String: Any]] {
                try #require(try json(try await client.json(.get, "/v1/health/summary?\(query)", token: token))["buckets"] as? [[String: Any]])
            }
            let steps = try await summary("type=steps&from=2026-10-31T04:00:00Z&to=2026-11-05T05:00:00Z")
            #expect(steps.map { $0["start"] as? String } == ["2026-11-01", "2026-11-02", "2026-11-03"])
            #expect(steps.map { $0["sum"] as? Double } == [25_000, 500, 500])
            let heart = try await summary("type=heartRate&from=2026-10-31T04:00:00Z&to=2026-11-05T05:00:00Z")
            #expect(heart.count == 1)
            let value = try #require(heart.first?["value"] as? [String: Any])
            #expect(value["min"] as? Double == 60 && value["max"] as? Double == 100 && value["average"] as? Double == 80 && value["count"] as? Int == 3)
            let weekly = try await summary("type=steps&bucket=week&from=2026-10-26T04:00:00Z&to=2026-11-09T05:00:00Z")
            #expect(weekly.map { $0["start"] as? String } == ["2026-10-26", "2026-11-02"])
            #expect(try await client.json(.get, "/v1/health/summary?type=steps&from=2026-11-05T00:00:00Z&to=2026-11-01T00:00:00Z", token: token).status == .badRequest)
            #expect(try await client.json(.get, "/v1/health/summary?type=weight", token: token).status == .badRequest)
        }
    }

    /// tombstone (1: stored, 2: deleted, 3: stored again), so devices that saw the tombstone take it back.
    @Test(arguments: TestEngines.all)
    func aSampleUploadedAgainAfterItsDeletionGetsTheNextVersion(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, _ in
            let token = try await client.signUp().accessToken
            try await Self.consent(client, token)
            let id = UUID()
            let samples = [Self.sample("heartRate", id: id, start: "2026-11-20T08:00:00Z", ["value": 64]), Self.sample("heartRate", start: "2026-11-20T08:01:00Z", ["value": 65])]
            func version() async throws -> Int? {
                let changes = try json(try await client.json(.get, "/v1/sync/changes?limit=100", token: token))["changes"] as? [[String: Any]]
                return changes?.first { ($0["id"] as? String) == id.uuidString.lowercased() }?["version"] as? Int
            }
            #expect(try json(try await Self.upload(client, token, samples))["created"] as? Int == 2)
            #expect(try await version() == 1)
            #expect(try await client.json(.delete, "/v1/health/samples/\(id)", token: token).status == .noContent)
            #expect(try await version() == 2)
            #expect(try json(try await Self.upload(client, token, samples))["created"] as? Int == 1)
            #expect(try await version() == 3)
        }
    }

    /// The store's insert of a batch (on PostgreSQL one statement of arrays, on SQLite rows of binds) stores each new
    /// row as given, with or without an end, on consecutive feed numbers in batch order; an id already stored is left
    /// alone and its number skipped.
    @Test(arguments: TestEngines.all)
    func aBatchIsStoredRowByRowInOrderAndStoredIdsAreLeftAlone(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let user = UserID(rawValue: try #require(UUID(uuidString: try await client.signUp().id)))
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            let rows = (0..<600).map { (index: Int) -> SealedSample in
                let at = start.addingTimeInterval(Double(index * 60))
                let ciphertext = Data((0...(index % 40)).map { (byte: Int) in UInt8(truncatingIfNeeded: byte * 7 + index) })
                // Every third an interval, the others an instant.
                let interval = index % 3 == 0
                return SealedSample(
                    id: HealthSampleID(rawValue: UUID()), type: interval ? .steps : .heartRate, start: at, end: interval ? at.addingTimeInterval(30) : nil,
                    keyID: "key-\(index % 2)", sealed: ciphertext
                )
            }
            let (first, second) = (Date(timeIntervalSince1970: 1_800_000_100), Date(timeIntervalSince1970: 1_800_000_200))
            let database = app.database
            let inserted = try await database.transaction { db in
                try await HealthSampleStore.insert(Array(rows[..<100]), of: user, firstSeq: 1, updatedAt: first, now: first, on: db)
            }
            #expect(inserted == Set(rows[..<100].map(\.id)))
            let again = try await database.transaction { db in
                try await HealthSampleStore.insert(Array(rows[50...]), of: user, firstSeq: 101, updatedAt: second, now: second, on: db)
            }
            #expect(again == Set(rows[100...].map(\.id)))

            let (stored, changes) = try await database.withConnection { db in
                (try await HealthSampleStore.page(of: user, after: 0, limit: 1_000, on: db).samples, try await SyncFeed.changes(of: user, since: 0, limit: 1_000, on: db))
            }
            #expect(stored.map(\.id) == rows.map(\.id))
            for (row, expected) in zip(stored, rows) {
                #expect(row.type == expected.type && row.start == expected.start && row.end == expected.end)
                #expect(row.keyID == expected.keyID && row.sealed == expected.sealed)
            }
            #expect(changes.map(\.seq) == Array(1...100) + Array(151...650))
            #expect(changes.map(\.recordID) == rows.map(\.id.description))
            #expect(changes.map(\.stamp) == rows.indices.map { RecordStamp(version: 1, updatedAt: $0 < 100 ? first : second, deleted: false) })
        }
    }

    @Test(arguments: TestEngines.all)
    func samplesSyncAndExportDecrypted(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let token = account.accessToken
            try await Self.consent(client, token)
            let id = UUID()
            let mutation: [String: Any] = [
                "mutationId": "hs-1", "collection": "healthSamples", "id": id.uuidString, "op": "upsert", "updatedAt": "2026-11-20T08:00:00Z",
                "data": Self.sample("oxygenSaturation", start: "2026-11-20T07:59:00Z", ["value": 98]),
            ]
            let pushed = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": [mutation]], token: token))
            #expect((pushed["results"] as? [[String: Any]])?.first?["status"] as? String == "applied")
            var resent = mutation
            resent["mutationId"] = "hs-2"
            let again = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": [resent]], token: token))
            #expect((again["results"] as? [[String: Any]])?.first?["version"] as? Int == 1)
            _ = try await Self.upload(client, token, [Self.sample("heartRate", start: "2026-11-20T08:00:00Z", ["value": 64])])
            // A device that never saw the sample cannot erase it (append-only); the answer carries the sample, but the
            // result kept in clear to answer replays names the version only.
            let eraseMutation: [String: Any] = [
                "mutationId": "hs-erase", "collection": "healthSamples", "id": id.uuidString, "op": "delete", "updatedAt": "2026-11-20T09:00:00Z",
            ]
            let erase = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": [eraseMutation]], token: token))
            let conflict = try #require((erase["results"] as? [[String: Any]])?.first)
            #expect(conflict["status"] as? String == "conflict" && ((conflict["serverRecord"] as? [String: Any])?["data"] as? [String: Any])?["value"] as? Double == 98)
            let replayed = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": [eraseMutation]], token: token))
            let replay = try #require((replayed["results"] as? [[String: Any]])?.first)
            #expect(replay["status"] as? String == "conflict" && replay["version"] as? Int == 1 && replay["serverRecord"] == nil)
            let database = app.database
            let stored = try await database.withConnection { db in
                try await db.select().column("result").from("sync_mutations").all().map { try $0.decode(column: "result", as: String.self) }
            }
            #expect(stored.count == 3 && stored.allSatisfy { !$0.contains("98") && !$0.contains("com.apple.health") })

            let changes = try #require(try json(try await client.json(.get, "/v1/sync/changes", token: token))["changes"] as? [[String: Any]])
            let samples = changes.filter { $0["collection"] as? String == "healthSamples" }
            #expect(samples.count == 2)
            #expect((samples.first { $0["id"] as? String == id.uuidString.lowercased() }?["data"] as? [String: Any])?["value"] as? Double == 98)

            let export = try json(try await client.json(.get, "/v1/me/export", token: token))
            let exported = try #require((export["sections"] as? [String: Any])?["healthSamples"] as? [[String: Any]])
            #expect(exported.count == 2 && Set(exported.compactMap { $0["value"] as? Double }) == [98, 64])

            // Without consent a push of samples is refused mutation by mutation.
            let stranger = try await client.signUp()
            let refused = try json(try await client.json(.post, "/v1/sync/push", body: ["mutations": [resent]], token: stranger.accessToken))
            #expect(problemCode(in: (refused["results"] as? [[String: Any]])?.first) == .consentRequired)
        }
    }
}

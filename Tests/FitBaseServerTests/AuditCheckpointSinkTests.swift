import AsyncHTTPClient
import Crypto
import FitBaseCore
import FitBaseSigV4
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOHTTP1
import SQLKit
import Testing

@testable import FitBaseServer

/// Audit cuts visible without a hand-kept file (issue 53): checkpoints also go to a sink outside the database
/// (`FITBASE_AUDIT_CHECKPOINT_URL`, a directory or an S3 bucket with object lock), `verify` checks the chains against
/// the sink's newest, and warns when `audit_checkpoints` lacks checkpoints or is older than the schedule.
@Suite struct AuditCheckpointSinkTests {
    /// The kinds of sink a test runs on: a directory always, an S3 bucket when `FITBASE_TEST_S3_URL` names a server.
    enum SinkKind: String, CaseIterable, CustomStringConvertible, Sendable {
        case directory
        case s3

        static var all: [SinkKind] { MediaBackend.s3URL == nil ? [.directory] : [.directory, .s3] }
        var description: String { rawValue }

        /// A fresh, empty sink of this kind (an S3 bucket of its own, created with object lock) and its setting.
        func make(client: HTTPClient) async throws -> (any AuditCheckpointSink, AuditConfiguration.Sink) {
            switch self {
            case .directory:
                let path = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-checkpoints-\(UUID().uuidString.prefix(8))").path
                return (DirectoryCheckpointSink(directory: path), .directory(path))
            case .s3:
                let (location, credentials) = try await AuditCheckpointSinkTests.lockedBucket(client: client)
                let objects = S3ObjectClient(location: location, credentials: credentials, client: client)
                return (S3CheckpointSink(objects: objects, prefix: "audit/", retentionDays: 1, clock: .system), .s3(location, prefix: "audit/", credentials))
            }
        }
    }

    /// A fresh bucket with object lock enabled (what production's checkpoint bucket must have).
    static func lockedBucket(client: HTTPClient) async throws -> (S3Location, AWSCredentials) {
        guard let url = MediaBackend.s3URL, var components = URLComponents(string: url), let base = components.host else {
            throw MediaTestSetupError(reason: MediaBackend.s3Skipped)
        }
        components.host = String(base.prefix(30)) + "-audit-" + UUID().uuidString.prefix(8).lowercased()
        let text = try #require(components.string)
        let location = try #require(S3Location(parsing: text))
        let credentials =
            AWSCredentials(environment: ProcessInfo.processInfo.environment)
            ?? AWSCredentials(accessKeyID: "fitbase-test", secretAccessKey: "fitbase-test-secret")
        _ = try await S3ObjectClient(location: location, credentials: credentials, client: client)
            .send("PUT", key: nil, headers: [("x-amz-bucket-object-lock-enabled", "true")], expecting: [200])
        return (location, credentials)
    }

    /// Two accounts with consented uploads (two audit chains), their audit key, and the log's database.
    private struct Fixture {
        let database: Database
        let keysDatabase: Database
        let keys: [String: SymmetricKey]
        let key: AuditKey
        let ana: UUID

        func close() async throws {
            if keysDatabase !== database { try await keysDatabase.shutdown() }
        }
    }

    private func fixture(_ client: any TestClientProtocol, _ app: TestApp) async throws -> Fixture {
        let ana = try await client.signUp()
        let bo = try await client.signUp()
        for account in [ana, bo] {
            try await HealthTests.consent(client, account.accessToken)
            for minute in 0..<3 {
                let sample = HealthTests.sample("heartRate", start: "2026-11-20T09:0\(minute):00Z", ["value": 60 + minute])
                #expect(try await HealthTests.upload(client, account.accessToken, [sample]).status == .ok)
            }
        }
        let (vault, keysDatabase) = try await SealedCycleDataTests.vault(app.testDatabase, app.database)
        let keys = try await AuditKey.load(from: vault.keys, masterKey: vault.masterKey, creating: false)
        return Fixture(
            database: app.database, keysDatabase: keysDatabase, keys: keys, key: try #require(AuditKey.current(of: keys)),
            ana: try #require(UUID(uuidString: ana.id)))
    }

    /// The attack: the newest entries of a chain cut together with their digests, the head rewound to match, and
    /// `audit_checkpoints` emptied — what the database alone cannot show.
    private func cut(_ subject: UUID, keeping kept: Int64, in database: Database) async throws {
        let keptHash = try await database.withConnection { db in
            try #require(try await db.select().column("hash").from("audit_entries").where("subject_id", .equal, subject).where("seq", .equal, kept).first())
                .decode(column: "hash", as: String.self)
        }
        try await database.transaction { db in
            try await db.delete(from: "audit_entries").where("subject_id", .equal, subject).where("seq", .greaterThan, kept).run()
            try await db.delete(from: "audit_digests").where("subject_id", .equal, subject).where("seq", .greaterThan, kept).run()
            try await db.update("audit_heads").set("seq", to: kept).set("hash", to: keptHash).set("digested_seq", to: kept)
                .where("subject_id", .equal, subject).run()
            try await db.delete(from: "audit_checkpoints").run()
        }
    }

    @Test(arguments: TestEngines.all, SinkKind.all)
    func aCutBelowTheNewestCheckpointIsFoundThroughTheSink(engine: DatabaseEngine, kind: SinkKind) async throws {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await withApp(engine) { client, app in
                let fixture = try await fixture(client, app)
                let (sink, setting) = try await kind.make(client: http)
                try await AuditDigests.sign(with: fixture.key, database: fixture.database, now: .storageNow)
                // The server's own service writes the checkpoint to the sink, a moment after it starts.
                let service = AuditService(
                    audit: AuditLog(database: fixture.database, clock: .system), key: fixture.key, logger: TestDatabase.logger,
                    clock: .system, interval: .milliseconds(20), sink: sink)
                let running = Task { try await service.run() }
                var waited = 0
                while try await sink.names().isEmpty, waited < 250 {
                    try await Task.sleep(for: .milliseconds(20))
                    waited += 1
                }
                running.cancel()
                try await running.value
                let names = try await sink.names()
                #expect(names.count == 1)
                let stored = try AuditCheckpoint.decoder.decode(AuditCheckpoint.self, from: try #require(try await sink.document(named: names[0])))
                #expect(stored == (try await AuditCheckpoint.latest(in: fixture.database)))
                #expect(stored.sinkName == names[0])

                var configuration = ServerConfiguration.testing(app.testDatabase)
                configuration.audit.checkpointSink = setting
                let administration = HealthAdministration(configuration: configuration, logger: TestDatabase.logger, clock: .system)
                let intact = try await administration.verifyAuditChain()
                #expect(intact.firstBreak == nil && intact.checkpoints == 2 && intact.warnings.isEmpty)

                try await cut(fixture.ana, keeping: 2, in: fixture.database)
                // Without the sink, the database alone still verifies: the finding of issue 53.
                let databaseOnly = try await HealthAdministration.verifyAuditChain(in: fixture.database, keys: fixture.keys, clock: .system)
                #expect(databaseOnly.firstBreak == nil)
                let broken = try #require(try await administration.verifyAuditChain().firstBreak)
                #expect(broken.contains(fixture.ana.uuidString.lowercased()) && broken.contains("cut or deleted"))
                // The same through --checkpoint-url, with no setting.
                let url: String
                switch setting {
                case .directory(let path): url = "file://" + path
                case .s3(let location, let prefix, _):
                    url = "s3://\(location.bucket)/\(prefix)?region=\(location.region)&endpoint=\(location.endpoint)"
                }
                let byURL = HealthAdministration(configuration: .testing(app.testDatabase), logger: TestDatabase.logger, clock: .system)
                #expect(try await byURL.verifyAuditChain(checkpointURL: url).firstBreak?.contains("cut or deleted") == true)
                if case .directory(let path) = setting { try? FileManager.default.removeItem(atPath: path) }
                try await fixture.close()
            }
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    @Test(arguments: TestEngines.all)
    func checkpointsDeletedFromTheDatabaseOrStaleAreWarnedAbout(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let fixture = try await fixture(client, app)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-checkpoints-\(UUID().uuidString.prefix(8))").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let sink = DirectoryCheckpointSink(directory: directory)
            let now = Date.storageNow
            for minutes in [3.0, 2, 1] {
                _ = try await AuditCheckpoint.make(with: fixture.key, database: fixture.database, now: now.addingTimeInterval(-60 * minutes), sink: sink)
            }
            func verify(sink: (any AuditCheckpointSink)? = sink, interval: TimeInterval = 3600) async throws -> HealthAdministration.AuditVerdict {
                try await HealthAdministration.verifyAuditChain(in: fixture.database, keys: fixture.keys, clock: .system, sink: sink, interval: interval)
            }
            let intact = try await verify()
            #expect(intact.firstBreak == nil && intact.warnings.isEmpty)

            // The newest row deleted: the database's newest is now an older one; the sink still has it.
            try await fixture.database.transaction { db in
                try await db.delete(from: "audit_checkpoints").where("at", .equal, now.addingTimeInterval(-60)).run()
            }
            #expect(try await verify().warnings == [
                "audit_checkpoints lacks 1 of the 3 newest checkpoints in \(sink) (newest missing: \(AuditCheckpoint.sinkLabel(now.addingTimeInterval(-60)))): "
                    + "rows were deleted, or the database was restored from an older backup"
            ])
            // Every row deleted.
            try await fixture.database.transaction { db in try await db.delete(from: "audit_checkpoints").run() }
            let emptied = try await verify()
            #expect(emptied.firstBreak == nil && emptied.warnings.count == 1 && emptied.warnings[0].contains("lacks 3 of the 3"))
            // Without a sink, an empty table is still a warning once entries span more than two periods.
            #expect(try await verify(sink: nil).warnings.isEmpty)
            #expect(try await verify(sink: nil, interval: 0.001).warnings.first?.contains("audit_checkpoints is empty") == true)

            // A newest checkpoint older than the schedule while entries go on being written after it.
            _ = try await AuditCheckpoint.make(with: fixture.key, database: fixture.database, now: now.addingTimeInterval(-3 * 3600))
            let stale = try await verify(sink: nil)
            #expect(stale.warnings.count == 1 && stale.warnings[0].contains("checkpoints were deleted or are not written"))
            try await fixture.close()
        }
    }

    @Test func aSinkNeverReplacesACheckpointAndListsItsOwnInOrder() async throws {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            for kind in SinkKind.all {
                let (sink, setting) = try await kind.make(client: http)
                try await sink.store(Data("first".utf8), named: "20261120T090000.000001Z-00000000000000aa.json")
                try await sink.store(Data("second".utf8), named: "20261120T085959.999999Z-00000000000000bb.json")
                await #expect(throws: (any Error).self, "\(kind) replaced a checkpoint") {
                    try await sink.store(Data("forged".utf8), named: "20261120T090000.000001Z-00000000000000aa.json")
                }
                #expect(try await sink.document(named: "20261120T090000.000001Z-00000000000000aa.json") == Data("first".utf8))
                switch setting {
                case .directory(let path):
                    #expect(FileManager.default.createFile(atPath: path + "/notes.txt", contents: Data()))
                    defer { try? FileManager.default.removeItem(atPath: path) }
                    #expect(try await sink.names() == ["20261120T085959.999999Z-00000000000000bb.json", "20261120T090000.000001Z-00000000000000aa.json"])
                case .s3(let location, _, let credentials):
                    #expect(try await sink.names() == ["20261120T085959.999999Z-00000000000000bb.json", "20261120T090000.000001Z-00000000000000aa.json"])
                    // Sent with object-lock retention, which the bucket keeps.
                    let head = try await S3ObjectClient(location: location, credentials: credentials, client: http)
                        .send("HEAD", key: "audit/20261120T090000.000001Z-00000000000000aa.json", expecting: [200])
                    #expect(head.headers.first(name: "x-amz-object-lock-mode") == "COMPLIANCE")
                    #expect(head.headers.first(name: "x-amz-object-lock-retain-until-date") != nil)
                }
            }
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    @Test func sinkNamesSortByTimeAndReadBack() throws {
        let at = try #require(try? Date("2026-11-20T09:00:00Z", strategy: .iso8601)).addingTimeInterval(0.000_042)
        #expect(AuditCheckpoint.sinkLabel(at) == "20261120T090000.000042Z")
        #expect(AuditCheckpoint.isSinkName(AuditCheckpoint.sinkLabel(at) + "-0123456789abcdef.json"))
        #expect(!AuditCheckpoint.isSinkName("20261120T090000.000042Z-0123456789abcdef.json.tmp"))
        let back = try #require(AuditCheckpointCoverage.instant(ofSinkName: "20261120T090000.000042Z-0123456789abcdef.json"))
        #expect(AuditChain.microseconds(back) == AuditChain.microseconds(at))
        #expect(AuditCheckpoint.sinkLabel(at.addingTimeInterval(-0.5)) < AuditCheckpoint.sinkLabel(at))
    }

    @Test func theSinkSettingIsReadOrRefusedNamingIt() throws {
        let credentials = ["AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"]
        #expect(try AuditConfiguration.resolve(environment: [:]) == AuditConfiguration())
        #expect(try AuditConfiguration.resolve(environment: ["FITBASE_AUDIT_CHECKPOINT_URL": "/srv/audit"]).checkpointSink == .directory("/srv/audit"))
        #expect(try AuditConfiguration.resolve(environment: ["FITBASE_AUDIT_CHECKPOINT_URL": "file:///srv/audit"]).checkpointSink == .directory("/srv/audit"))
        let s3 = try AuditConfiguration.resolve(environment: credentials.merging([
            "FITBASE_AUDIT_CHECKPOINT_URL": "s3://fitbase-audit/prod/checkpoints?region=eu-central-1",
            "FITBASE_AUDIT_CHECKPOINT_RETENTION_DAYS": "400", "FITBASE_AUDIT_CHECKPOINT_SECONDS": "900",
        ]) { $1 })
        guard case .s3(let location, let prefix, _) = s3.checkpointSink else {
            Issue.record("an s3:// sink was not read as one")
            return
        }
        #expect(location.bucket == "fitbase-audit" && location.region == "eu-central-1" && prefix == "prod/checkpoints/")
        #expect(s3.checkpointRetentionDays == 400 && s3.checkpointInterval == 900)
        #expect(try ServerConfiguration.resolve(environment: ["FITBASE_AUDIT_CHECKPOINT_URL": "/srv/audit"]).audit.checkpointSink == .directory("/srv/audit"))

        func refused(_ environment: [String: String]) -> String? {
            do {
                _ = try AuditConfiguration.resolve(environment: environment)
                return nil
            } catch {
                return error.source
            }
        }
        #expect(refused(["FITBASE_AUDIT_CHECKPOINT_URL": "s3://fitbase-audit/x"]) == "FITBASE_AUDIT_CHECKPOINT_URL")  // no credentials
        #expect(refused(credentials.merging(["FITBASE_AUDIT_CHECKPOINT_URL": "s3://Not_A_Bucket/x"]) { $1 }) == "FITBASE_AUDIT_CHECKPOINT_URL")
        #expect(refused(["FITBASE_AUDIT_CHECKPOINT_URL": "https://example.com/audit"]) == "FITBASE_AUDIT_CHECKPOINT_URL")
        #expect(refused(["FITBASE_AUDIT_CHECKPOINT_URL": "/srv/audit", "FITBASE_AUDIT_CHECKPOINT_RETENTION_DAYS": "30"]) == "FITBASE_AUDIT_CHECKPOINT_RETENTION_DAYS")
        #expect(refused(["FITBASE_AUDIT_CHECKPOINT_SECONDS": "5"]) == "FITBASE_AUDIT_CHECKPOINT_SECONDS")
    }
}

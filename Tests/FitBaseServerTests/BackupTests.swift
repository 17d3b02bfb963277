import FitBaseCore
import FitBaseTestSupport
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import SQLKit
import Synchronization
import Testing

@testable import FitBaseServer

/// `fitbase backup` / `fitbase restore` (``DatabaseBackup``): online, consistent, and the key store in or out.
@Suite struct BackupTests {
    /// The workout logs a writer had acknowledged, in the order it wrote them.
    final class Acknowledged: Sendable {
        private let ids = Mutex<[String]>([])
        /// Set when the writer is to stop after its current write.
        let stop = Atomic(false)
        func append(_ id: String) { ids.withLock { $0.append(id.lowercased()) } }
        var all: [String] { ids.withLock { $0 } }
    }

    static func masterKey() -> String { Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString() }

    static func logWorkout(_ client: any TestClientProtocol, _ token: String, _ workout: String, _ index: Int) async throws -> String {
        let response = try await client.json(
            .post, "/v1/history",
            body: ["workoutId": workout, "completedAt": "2026-01-04T10:00:00Z", "duration": 20 + index % 30, "notes": "set \(index)"], token: token
        )
        try #require(response.status == .created, "logging a workout: \(response.status) \(String(buffer: response.body))")
        return try #require(json(response)["id"] as? String)
    }

    /// A backup taken while a writer logs workouts one after another restores to a database holding every write
    /// acknowledged before the backup began, and — the copy being one snapshot — exactly a first part of the writer's
    /// sequence, nothing out of order and nothing never acknowledged. The key store comes back, and with it the health
    /// data a restarted server decrypts.
    @Test func aBackupUnderAWriteLoadRestoresEveryAcknowledgedWrite() async throws {
        let key = Self.masterKey()
        try await TestDatabase.with(.sqlite, migrated: true) { database in
            let backupFile = database.dataDirectory + "-backup.tar"
            defer { try? FileManager.default.removeItem(atPath: backupFile) }
            let (account, acknowledged, acknowledgedBefore) = try await withApp(on: database, options: .init(masterKey: key)) { client, app in
                let workout = CatalogTests.fixture[0]
                try await CatalogImporter.importCatalog(([workout], []), into: app.database, now: .storageNow)
                let account = try await client.signUp()
                try await HealthTests.consent(client, account.accessToken)
                let sample = HealthTests.sample("heartRate", start: "2026-11-20T07:00:00Z", ["value": 61])
                try #require(try await HealthTests.upload(client, account.accessToken, [sample]).status == .ok)

                let acknowledged = Acknowledged()
                for index in 0..<20 { acknowledged.append(try await Self.logWorkout(client, account.accessToken, workout.id.description, index)) }
                let writer = Task {
                    var index = 20
                    while !acknowledged.stop.load(ordering: .relaxed) {
                        acknowledged.append(try await Self.logWorkout(client, account.accessToken, workout.id.description, index))
                        index += 1
                    }
                }
                let before = acknowledged.all
                let report = try await DatabaseBackup.create(configuration: app.configuration, to: backupFile, includeKeys: true, logger: TestDatabase.logger)
                acknowledged.stop.store(true, ordering: .relaxed)
                try await writer.value
                #expect(report.includesKeys)
                #expect(report.bytes > 0)
                return (account, acknowledged.all, before)
            }

            let restored = database.dataDirectory + "-restored"
            defer { try? FileManager.default.removeItem(atPath: restored) }
            let target = ServerConfiguration(dataDirectory: restored)
            let restoreReport = try await DatabaseBackup.restore(from: backupFile, configuration: target, logger: TestDatabase.logger)
            #expect(restoreReport.includesKeys)
            #expect(FileManager.default.fileExists(atPath: restored + "/keystore.sqlite"))

            let logs = try await Self.workoutLogs(at: restored + "/fitbase.sqlite")
            // Every write acknowledged before the backup began is there…
            #expect(Set(acknowledgedBefore).isSubset(of: Set(logs)), "acknowledged before the backup, missing from it")
            // …and what is there is the writer's first writes, in order: one consistent moment of the database.
            #expect(logs.count >= acknowledgedBefore.count)
            #expect(Set(logs) == Set(acknowledged.prefix(logs.count)), "the restored logs are not a first part of what was written")

            // A server on the restored directory, with the same master key, signs the user in and decrypts the sample.
            try await withApp(on: database, options: .init(dataDirectory: restored, masterKey: key, configure: {
                $0.database = .sqlite(path: restored + "/fitbase.sqlite")
            })) { client, _ in
                let signedIn = try await client.signIn(account)
                let samples = try json(try await client.json(.get, "/v1/health/samples?limit=10", token: signedIn.accessToken))["items"] as? [[String: Any]]
                #expect(samples?.count == 1)
                #expect(samples?.first?["value"] as? Double == 61)
                let history = try json(try await client.json(.get, "/v1/history?limit=100", token: signedIn.accessToken))
                #expect((history["items"] as? [[String: Any]])?.isEmpty == false)
            }
        }
    }

    @Test func withoutKeysTheKeyStoreStaysOut() async throws {
        try await TestDatabase.with(.sqlite, migrated: true) { database in
            let backupFile = database.dataDirectory + "-backup.tar"
            defer { try? FileManager.default.removeItem(atPath: backupFile) }
            try await withApp(on: database) { client, app in
                let account = try await client.signUp()
                try await HealthTests.consent(client, account.accessToken)
                let sample = HealthTests.sample("heartRate", start: "2026-11-20T07:00:00Z", ["value": 61])
                try #require(try await HealthTests.upload(client, account.accessToken, [sample]).status == .ok)
                let report = try await DatabaseBackup.create(configuration: app.configuration, to: backupFile, includeKeys: false, logger: TestDatabase.logger)
                #expect(!report.includesKeys)
            }
            let restored = database.dataDirectory + "-restored"
            defer { try? FileManager.default.removeItem(atPath: restored) }
            let report = try await DatabaseBackup.restore(from: backupFile, configuration: ServerConfiguration(dataDirectory: restored), logger: TestDatabase.logger)
            #expect(!report.includesKeys)
            #expect(FileManager.default.fileExists(atPath: restored + "/fitbase.sqlite"))
            #expect(!FileManager.default.fileExists(atPath: restored + "/keystore.sqlite"))
            // The archive is a plain tar: its entries are the manifest and the database, nothing else.
            let reader = try BackupArchive.Reader(path: backupFile)
            var names: [String] = []
            while let entry = try reader.next() {
                names.append(entry.name)
                try reader.skip(size: entry.size)
            }
            #expect(names == ["manifest.json", "fitbase.sqlite"])
        }
    }

    @Test func restoreRefusesANonEmptyDirectoryAndADamagedBackup() async throws {
        try await TestDatabase.with(.sqlite, migrated: true) { database in
            let backupFile = database.dataDirectory + "-backup.tar"
            defer { try? FileManager.default.removeItem(atPath: backupFile) }
            try await withApp(on: database) { _, app in
                _ = try await DatabaseBackup.create(configuration: app.configuration, to: backupFile, includeKeys: true, logger: TestDatabase.logger)
                // A second backup never overwrites the first.
                await #expect(throws: BackupError.self) {
                    try await DatabaseBackup.create(configuration: app.configuration, to: backupFile, includeKeys: true, logger: TestDatabase.logger)
                }
            }
            // The test's own data directory is not empty.
            await #expect(throws: BackupError.self) {
                try await DatabaseBackup.restore(from: backupFile, configuration: ServerConfiguration(dataDirectory: database.dataDirectory), logger: TestDatabase.logger)
            }
            // One flipped byte in the database's bytes fails its checksum, and nothing is left behind.
            let damaged = database.dataDirectory + "-damaged.tar"
            defer { try? FileManager.default.removeItem(atPath: damaged) }
            var bytes = try Data(contentsOf: URL(fileURLWithPath: backupFile))
            bytes[4 * 512 + 100] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: damaged))
            let restored = database.dataDirectory + "-restored"
            defer { try? FileManager.default.removeItem(atPath: restored) }
            await #expect(throws: BackupError.self) {
                try await DatabaseBackup.restore(from: damaged, configuration: ServerConfiguration(dataDirectory: restored), logger: TestDatabase.logger)
            }
            #expect((try? FileManager.default.contentsOfDirectory(atPath: restored)) ?? [] == [])
        }
    }

    /// Media kept in the data directory comes with the backup and goes back where it was; a backup naming a file
    /// outside the media directory restores nothing.
    @Test func mediaInTheDataDirectoryIsBackedUpAndRestored() async throws {
        try await TestDatabase.with(.sqlite, migrated: true) { database in
            let backupFile = database.dataDirectory + "-backup.tar"
            defer { try? FileManager.default.removeItem(atPath: backupFile) }
            let options = TestAppOptions(configure: { $0.media.store = .local(directory: nil) })
            let objects = try await withApp(on: database, options: options) { client, app -> [String] in
                let account = try await client.signUp()
                #expect(try await ProfilePhotoTests.upload(client, TestImages.jpeg(), token: account.accessToken).status.code / 100 == 2)
                let report = try await DatabaseBackup.create(configuration: app.configuration, to: backupFile, includeKeys: true, logger: TestDatabase.logger)
                #expect(report.includesKeys)
                return try DatabaseBackup.mediaObjects(in: try #require(DatabaseBackup.localMediaRoot(app.configuration)))
            }
            #expect(!objects.isEmpty && objects.allSatisfy { $0.hasPrefix("users/") })
            let restored = database.dataDirectory + "-restored"
            defer { try? FileManager.default.removeItem(atPath: restored) }
            _ = try await DatabaseBackup.restore(from: backupFile, configuration: ServerConfiguration(dataDirectory: restored), logger: TestDatabase.logger)
            for object in objects {
                let original = try Data(contentsOf: URL(fileURLWithPath: database.dataDirectory + "/media/" + object))
                #expect(try Data(contentsOf: URL(fileURLWithPath: restored + "/media/" + object)) == original, "\(object)")
            }

            // A manifest naming `media/../escaped` is refused, and nothing is left behind.
            let hostile = database.dataDirectory + "-hostile.tar"
            defer { try? FileManager.default.removeItem(atPath: hostile) }
            let payload = Data("not yours".utf8)
            let digest = SHA256.hash(data: payload).map { String(format: "%02x", $0) }.joined()
            let manifest = DatabaseBackup.Manifest(
                createdAt: Date(), includesKeys: false, lastMigration: nil,
                files: [.init(name: "fitbase.sqlite", role: "data", bytes: 0, sha256: ""), .init(name: "media/../escaped", role: "media", bytes: UInt64(payload.count), sha256: digest)]
            )
            let writer = try BackupArchive.Writer(path: hostile)
            try writer.add(name: "manifest.json", data: try JSONEncoder().encode(manifest), modified: Date())
            try writer.add(name: "media/../escaped", data: payload, modified: Date())
            try writer.finish()
            let target = database.dataDirectory + "-hostile-restored"
            defer { try? FileManager.default.removeItem(atPath: target) }
            await #expect(throws: BackupError.self) {
                try await DatabaseBackup.restore(from: hostile, configuration: ServerConfiguration(dataDirectory: target), logger: TestDatabase.logger)
            }
            #expect(!FileManager.default.fileExists(atPath: target + "/escaped") && !FileManager.default.fileExists(atPath: target + "/media/../escaped"))
        }
    }

    /// Names of 100 bytes or more use ustar's prefix field, and read back whole.
    @Test func longEntryNamesGoThroughTheArchive() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-long-\(UUID().uuidString).tar").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let name = "media/workouts/" + String(repeating: "a", count: 60) + "/" + String(repeating: "b", count: 70) + ".mp4"
        let writer = try BackupArchive.Writer(path: path)
        try writer.add(name: name, data: Data("video".utf8), modified: Date())
        try writer.finish()
        let reader = try BackupArchive.Reader(path: path)
        let entry = try #require(try reader.next())
        #expect(entry.name == name && entry.size == 5)
    }

    @Test func postgresIsRefusedWithThePgDumpRecipe() async throws {
        let configuration = ServerConfiguration(database: .postgres(url: "postgres://fitbase@127.0.0.1:5433/fitbase"))
        let error = await #expect(throws: BackupError.self) {
            try await DatabaseBackup.create(configuration: configuration, to: "/tmp/never-written.tar", includeKeys: true, logger: TestDatabase.logger)
        }
        #expect(error?.description.contains("pg_dump --format=custom") == true)
    }

    /// The ids of the workout logs in the SQLite file at `path`, read on a connection of its own.
    static func workoutLogs(at path: String) async throws -> [String] {
        let database = try await Database.open(.sqlite(path: path), maxConnectionsPerEventLoop: 1, checkpointsInBackground: false, logger: TestDatabase.logger)
        do {
            let ids = try await database.withConnection { db in
                try await db.select().column("id").from("workout_logs").all().map { try $0.decode(column: "id", as: UUID.self).uuidString.lowercased() }
            }
            try await database.shutdown()
            return ids
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}

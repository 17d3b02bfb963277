import FitBaseAPI
import FitBaseCore
import Foundation
import GRDB
import Testing

@testable import FitBaseClient

/// The device's store is sealed at rest, migrates a plaintext store, and forgets everything — key included — on erase.
@Suite struct LocalStoreSealingTests {
    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-sealed-\(UUID().uuidString)")
    }

    static func bytes(_ path: String) -> Data {
        var bytes = Data()
        for suffix in ["", "-wal", "-journal"] {
            if let data = try? Data(contentsOf: URL(fileURLWithPath: path + suffix)) { bytes.append(data) }
        }
        return bytes
    }

    @Test func recordsAndQueuedChangesAreSealedAndReadBack() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let keys = FileKeyProvider(fileURL: directory.appendingPathComponent("store.key"))
        let store = try LocalStore(path: path, keyProvider: keys)
        try await store.change(.cycleLogs, id: "p1", data: Data(#"{"id":"p1","startDate":"2026-11-01","notes":"MARKER-SEALED-NOTE"}"#.utf8))
        try await store.apply(
            [.init(collection: .healthSamples, id: "h1", version: 3, updatedAt: .now, data: Data(#"{"id":"h1","value":"MARKER-SEALED-HEALTH"}"#.utf8))], cursor: "c1")
        try await store.storeCachedResponse(.init(body: Data("MARKER-SEALED-CACHE".utf8), etag: "\"v1\"", fetchedAt: .now), for: "k")
        for marker in ["MARKER-SEALED-NOTE", "MARKER-SEALED-HEALTH", "MARKER-SEALED-CACHE"] {
            #expect(!Self.bytes(path).contains(Data(marker.utf8)))
        }
        #expect(try await store.record(.cycleLogs, id: "p1").map { String(decoding: $0.data, as: UTF8.self) }?.contains("MARKER-SEALED-NOTE") == true)
        #expect(try await store.nextBatch(limit: 10).first?.data.map { String(decoding: $0, as: UTF8.self) }?.contains("MARKER-SEALED-NOTE") == true)
        #expect(try await store.cachedResponse("k")?.etag == "\"v1\"")
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("store.key").path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        // Another key cannot open them.
        let stranger = try LocalStore(path: path, keyProvider: InMemoryKeyProvider())
        await #expect(throws: (any Error).self) { try await stranger.records(of: .cycleLogs) }

        try await store.erase()
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("store.key").path))
        #expect(try await store.records(of: .cycleLogs).isEmpty)
        #expect(try await store.pendingCount() == 0)
        #expect(try await store.cachedResponse("k") == nil)
        #expect(try await store.state("cursor") == nil)
        // Usable again, under a new key.
        try await store.change(.plans, id: "x", data: Data(#"{"id":"x"}"#.utf8))
        #expect(try await store.records(of: .plans).count == 1)
    }

    @Test func aStoreWrittenBeforeSealingIsSealedWhenOpened() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("legacy.sqlite").path
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let legacy = try DatabaseQueue(path: path)
        try await legacy.write { db in
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('1-sync');
                CREATE TABLE records (
                    collection TEXT NOT NULL, id TEXT NOT NULL, data BLOB, version INTEGER NOT NULL DEFAULT 0,
                    updated_at DOUBLE NOT NULL, resync INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (collection, id)
                );
                CREATE TABLE pending_mutations (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, mutation_id TEXT NOT NULL UNIQUE, collection TEXT NOT NULL,
                    record_id TEXT NOT NULL, op TEXT NOT NULL, data BLOB, updated_at DOUBLE NOT NULL, sent INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE sync_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """)
            try db.execute(sql: "INSERT INTO records (collection, id, data, updated_at) VALUES ('cycleLogs', 'p1', ?, 0)", arguments: [Data(#"{"notes":"MARKER-LEGACY"}"#.utf8)])
            try db.execute(
                sql: "INSERT INTO pending_mutations (mutation_id, collection, record_id, op, data, updated_at) VALUES ('m1', 'cycleLogs', 'p1', 'upsert', ?, 0)",
                arguments: [Data(#"{"notes":"MARKER-LEGACY"}"#.utf8)])
        }
        try legacy.close()
        let store = try LocalStore(path: path, keyProvider: InMemoryKeyProvider())
        #expect(!Self.bytes(path).contains(Data("MARKER-LEGACY".utf8)))
        #expect(try await store.records(of: .cycleLogs).first.map { String(decoding: $0.data, as: UTF8.self) } == #"{"notes":"MARKER-LEGACY"}"#)
        #expect(try await store.nextBatch(limit: 1).first?.data.map { String(decoding: $0, as: UTF8.self) } == #"{"notes":"MARKER-LEGACY"}"#)
    }

    @Test func theInMemoryKeyIsStableUntilDestroyed() throws {
        let keys = InMemoryKeyProvider()
        let first = try keys.loadOrCreateKey()
        #expect(try keys.loadOrCreateKey() == first)
        try keys.destroyKey()
        #expect(try keys.loadOrCreateKey() != first)
        let file = Self.directory().appendingPathComponent("bad.key")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("short".utf8).write(to: file)
        #expect(throws: KeyProviderError.self) { try FileKeyProvider(fileURL: file).loadOrCreateKey() }
        try FileKeyProvider(fileURL: file).destroyKey()
        try FileKeyProvider(fileURL: file).destroyKey()
    }
}

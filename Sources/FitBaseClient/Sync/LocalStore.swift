import FitBaseCore
import Foundation
import GRDB
import Synchronization

/// The device's copy of the signed-in user's synced collections, and the queue of changes not yet on the server,
/// in one SQLite file (GRDB). Every local change writes the record and queues its mutation in one transaction, so a
/// change is either both saved and queued or neither, and the queue survives the app being killed.
///
/// Tables:
/// * `records`: per collection and id, the record's JSON (`NULL` for a local deletion not yet pushed), the server
///   version it was based on (0 for a record the server has not seen), when it was changed.
/// * `pending_mutations`: the queue, in order. `sent` marks mutations that may have reached the server: they keep
///   their `mutation_id` forever, so sending them again is answered from the server's record of them. Unsent ones
///   are coalesced — a second edit of a record replaces the first in the queue.
/// * `sync_state`: the feed cursor, the owner's user id, the last successful sync.
/// * `cached_responses`: server answers the app layer keeps for cache-first reads, with their validator and age.
///
/// Records, queued changes and cached answers are sealed at rest (AES-256-GCM, each bound to its row) with a key from
/// a ``KeyProvider`` — cycle logs, workout notes and health samples pulled through sync never reach the file in
/// plaintext. SQLite's `secure_delete` zeroes what is deleted. ``erase()`` empties the store and destroys the key.
public final class LocalStore: Sendable {
    let queue: DatabaseQueue
    private let keyProvider: any KeyProvider
    private let currentSealer = Mutex<RecordSealer?>(nil)

    /// Opens (creating if needed) the store in the SQLite file at `path`, sealed with `keyProvider`'s key — by default
    /// the Keychain on Apple platforms, elsewhere a file `<path>.key` readable by its owner only.
    public convenience init(path: String, keyProvider: (any KeyProvider)? = nil) throws {
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        try self.init(queue: DatabaseQueue(path: path, configuration: configuration), keyProvider: keyProvider ?? Self.defaultKeyProvider(path: path))
    }

    /// A store that lives in memory only (tests, previews), sealed with `keyProvider`'s key (a key in memory by default).
    public static func inMemory(keyProvider: any KeyProvider = InMemoryKeyProvider()) throws -> LocalStore {
        try LocalStore(queue: DatabaseQueue(), keyProvider: keyProvider)
    }

    init(queue: DatabaseQueue, keyProvider: any KeyProvider) throws {
        self.queue = queue
        self.keyProvider = keyProvider
        let sealer = try self.sealer()
        try Self.migrator(sealer).migrate(queue)
    }

    /// The Keychain on Apple platforms; a 0600 file beside the database elsewhere.
    static func defaultKeyProvider(path: String) -> any KeyProvider {
        #if canImport(Security)
        KeychainKeyProvider(account: path)
        #else
        FileKeyProvider(fileURL: URL(fileURLWithPath: path + ".key"))
        #endif
    }

    /// The sealer of the current key (made on first use, and again after ``erase()`` destroyed the last one).
    func sealer() throws -> RecordSealer {
        try currentSealer.withLock { sealer in
            if let sealer { return sealer }
            let made = RecordSealer(key: try keyProvider.loadOrCreateKey())
            sealer = made
            return made
        }
    }

    /// What a sealed value is bound to: its collection and id (`cache` and the key for a cached answer).
    static func context(_ collection: String, _ id: String) -> String { collection + "/" + id }

    private static func migrator(_ sealer: RecordSealer) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1-sync") { db in
            try db.execute(sql: """
                CREATE TABLE records (
                    collection TEXT NOT NULL, id TEXT NOT NULL, data BLOB, version INTEGER NOT NULL DEFAULT 0,
                    updated_at DOUBLE NOT NULL, resync INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (collection, id)
                );
                CREATE TABLE pending_mutations (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, mutation_id TEXT NOT NULL UNIQUE, collection TEXT NOT NULL,
                    record_id TEXT NOT NULL, op TEXT NOT NULL, data BLOB, updated_at DOUBLE NOT NULL, sent INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX pending_mutations_record ON pending_mutations (collection, record_id);
                CREATE TABLE sync_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """)
        }
        migrator.registerMigration("2-sealed") { db in
            // Stores written before sealing: seal what they hold in plaintext (secure_delete zeroes the old pages).
            try db.execute(sql: "PRAGMA secure_delete = ON")
            for row in try Row.fetchAll(db, sql: "SELECT collection, id, data FROM records WHERE data IS NOT NULL") {
                let (collection, id, data): (String, String, Data) = (row["collection"], row["id"], row["data"])
                guard !RecordSealer.isSealed(data) else { continue }
                let sealed = try sealer.seal(data, context: context(collection, id))
                try db.execute(sql: "UPDATE records SET data = ? WHERE collection = ? AND id = ?", arguments: [sealed, collection, id])
            }
            for row in try Row.fetchAll(db, sql: "SELECT seq, collection, record_id, data FROM pending_mutations WHERE data IS NOT NULL") {
                let (seq, collection, id, data): (Int64, String, String, Data) = (row["seq"], row["collection"], row["record_id"], row["data"])
                guard !RecordSealer.isSealed(data) else { continue }
                let sealed = try sealer.seal(data, context: context(collection, id))
                try db.execute(sql: "UPDATE pending_mutations SET data = ? WHERE seq = ?", arguments: [sealed, seq])
            }
            try db.execute(sql: """
                CREATE TABLE cached_responses (key TEXT PRIMARY KEY, body BLOB NOT NULL, etag TEXT, fetched_at DOUBLE NOT NULL);
                """)
        }
        return migrator
    }

    // MARK: Records

    /// A record as stored on the device.
    struct StoredRecord: Sendable {
        var id: String
        var data: Data
        var version: Int
        var updatedAt: Date
    }

    /// The live records of `collection` (local deletions not yet pushed are left out).
    func records(of collection: SyncCollection) async throws -> [StoredRecord] {
        let sealer = try self.sealer()
        return try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, data, version, updated_at FROM records WHERE collection = ? AND data IS NOT NULL", arguments: [collection.rawValue])
                .map { try Self.record($0, collection, sealer) }
        }
    }

    func record(_ collection: SyncCollection, id: String) async throws -> StoredRecord? {
        let sealer = try self.sealer()
        return try await queue.read { db in
            try Row.fetchOne(db, sql: "SELECT id, data, version, updated_at FROM records WHERE collection = ? AND id = ? AND data IS NOT NULL", arguments: [collection.rawValue, id])
                .map { try Self.record($0, collection, sealer) }
        }
    }

    private static func record(_ row: Row, _ collection: SyncCollection, _ sealer: RecordSealer) throws -> StoredRecord {
        let id: String = row["id"]
        return StoredRecord(
            id: id, data: try sealer.open(row["data"], context: context(collection.rawValue, id)), version: row["version"],
            updatedAt: Date(timeIntervalSince1970: row["updated_at"])
        )
    }

    /// The ids of `collection`'s records with a change not yet accepted by the server.
    package func pendingRecordIDs(of collection: SyncCollection) async throws -> Set<String> {
        try await queue.read { db in
            Set(try String.fetchAll(db, sql: "SELECT record_id FROM pending_mutations WHERE collection = ?", arguments: [collection.rawValue]))
        }
    }

    /// Saves a local change (`data` for an upsert, `nil` for a deletion) and queues its mutation, in one transaction.
    func change(_ collection: SyncCollection, id: String, data plaintext: Data?, at now: Date = .now) async throws {
        let data = try plaintext.map { try self.sealer().seal($0, context: Self.context(collection.rawValue, id)) }
        try await queue.write { db in
            let arguments: StatementArguments = [collection.rawValue, id]
            let version = try Int.fetchOne(db.cachedStatement(sql: "SELECT version FROM records WHERE collection = ? AND id = ?"), arguments: arguments)
            let unsent = try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM pending_mutations WHERE collection = ? AND record_id = ? AND sent = 0"), arguments: arguments)
            let sent = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM pending_mutations WHERE collection = ? AND record_id = ? AND sent = 1)"), arguments: arguments) ?? false
            if data == nil, (version ?? 0) == 0, !sent {
                // Created and deleted on this device before the server saw it: there is nothing to tell the server.
                try db.run(sql: "DELETE FROM pending_mutations WHERE collection = ? AND record_id = ?", arguments: arguments)
                try db.run(sql: "DELETE FROM records WHERE collection = ? AND id = ?", arguments: arguments)
                return
            }
            try db.run(
                sql: """
                    INSERT INTO records (collection, id, data, version, updated_at) VALUES (?, ?, ?, 0, ?)
                    ON CONFLICT (collection, id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
                    """,
                arguments: [collection.rawValue, id, data, now.timeIntervalSince1970]
            )
            let op = (data == nil ? SyncOperation.delete : .upsert).rawValue
            if let unsent {
                try db.run(sql: "UPDATE pending_mutations SET op = ?, data = ?, updated_at = ? WHERE seq = ?", arguments: [op, data, now.timeIntervalSince1970, unsent])
            } else {
                try db.run(
                    sql: "INSERT INTO pending_mutations (mutation_id, collection, record_id, op, data, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [UUID().uuidString.lowercased(), collection.rawValue, id, op, data, now.timeIntervalSince1970]
                )
            }
        }
    }

    // MARK: Pulling

    /// Applies a page of the change feed and moves the cursor, in one transaction. Records with queued local changes
    /// keep them: the server settles those when they are pushed.
    func apply(_ changes: [PulledChange], cursor: String) async throws {
        let sealer = try self.sealer()
        try await queue.write { db in
            for change in changes {
                let queued = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM pending_mutations WHERE collection = ? AND record_id = ?)"),
                    arguments: [change.collection.rawValue, change.id]
                ) ?? false
                if queued { continue }
                try Self.put(change.collection, id: change.id, data: change.data, version: change.version, updatedAt: change.updatedAt, sealer: sealer, in: db)
            }
            try Self.setState("cursor", to: cursor, in: db)
        }
    }

    /// A change pulled from the feed; `data` is `nil` for a deletion.
    struct PulledChange: Sendable {
        var collection: SyncCollection
        var id: String
        var version: Int
        var updatedAt: Date
        var data: Data?
    }

    /// Starts a full resync: forgets the cursor and marks every record, so those the server no longer has can be
    /// dropped by ``finishResync()``.
    func beginResync() async throws {
        try await queue.write { db in
            try db.run(sql: "UPDATE records SET resync = 1")
            try db.run(sql: "DELETE FROM sync_state WHERE key = 'cursor'")
        }
    }

    /// Drops the records a full resync did not return (unless a local change of theirs is queued).
    func finishResync() async throws {
        try await queue.write { db in
            try db.run(sql: """
                DELETE FROM records WHERE resync = 1 AND NOT EXISTS
                (SELECT 1 FROM pending_mutations p WHERE p.collection = records.collection AND p.record_id = records.id)
                """)
            try db.run(sql: "UPDATE records SET resync = 0")
        }
    }

    static func put(
        _ collection: SyncCollection, id: String, data plaintext: Data?, version: Int, updatedAt: Date, sealer: RecordSealer, in db: GRDB.Database
    ) throws {
        guard let plaintext else {
            try db.run(sql: "DELETE FROM records WHERE collection = ? AND id = ?", arguments: [collection.rawValue, id])
            return
        }
        try db.run(
            sql: """
                INSERT INTO records (collection, id, data, version, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (collection, id) DO UPDATE SET data = excluded.data, version = excluded.version,
                    updated_at = excluded.updated_at, resync = 0
                """,
            arguments: [collection.rawValue, id, try sealer.seal(plaintext, context: context(collection.rawValue, id)), version, updatedAt.timeIntervalSince1970]
        )
    }

    // MARK: State

    func state(_ key: String) async throws -> String? {
        try await queue.read { db in try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM sync_state WHERE key = ?"), arguments: [key]) }
    }

    func setState(_ key: String, to value: String) async throws {
        try await queue.write { db in try Self.setState(key, to: value, in: db) }
    }

    private static func setState(_ key: String, to value: String, in db: GRDB.Database) throws {
        try db.run(sql: "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", arguments: [key, value])
    }

    // MARK: Erasing

    /// Deletes everything — records, queue, cursor, cached answers — and destroys the key that sealed them, so not even
    /// a copy of the file taken earlier can be read (the user signed out, deleted the account, or another user signed
    /// in). The store stays usable: the next write makes a new key.
    public func erase() async throws {
        try await queue.write { db in
            try db.execute(sql: "DELETE FROM records; DELETE FROM pending_mutations; DELETE FROM sync_state; DELETE FROM cached_responses;")
        }
        try await queue.writeWithoutTransaction { db in
            // Give the freed pages back and empty the write-ahead log.
            try db.execute(sql: "VACUUM")
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal" { try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        try currentSealer.withLock { sealer in
            sealer = nil
            try keyProvider.destroyKey()
        }
    }
}

extension GRDB.Database {
    /// `execute(sql:arguments:)` with the statement prepared once per connection (GRDB's statement cache): syncing
    /// runs the same few statements thousands of times.
    func run(sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

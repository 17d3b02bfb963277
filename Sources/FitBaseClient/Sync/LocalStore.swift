import FitBaseCore
import Foundation
import GRDB

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
public final class LocalStore: Sendable {
    let queue: DatabaseQueue

    /// Opens (creating if needed) the store in the SQLite file at `path`.
    public convenience init(path: String) throws {
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        try self.init(queue: DatabaseQueue(path: path, configuration: configuration))
    }

    /// A store that lives in memory only (tests, previews).
    public static func inMemory() throws -> LocalStore {
        try LocalStore(queue: DatabaseQueue())
    }

    init(queue: DatabaseQueue) throws {
        self.queue = queue
        try Self.migrator.migrate(queue)
    }

    private static var migrator: DatabaseMigrator {
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
        try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, data, version, updated_at FROM records WHERE collection = ? AND data IS NOT NULL", arguments: [collection.rawValue])
                .map(Self.record)
        }
    }

    func record(_ collection: SyncCollection, id: String) async throws -> StoredRecord? {
        try await queue.read { db in
            try Row.fetchOne(db, sql: "SELECT id, data, version, updated_at FROM records WHERE collection = ? AND id = ? AND data IS NOT NULL", arguments: [collection.rawValue, id])
                .map(Self.record)
        }
    }

    private static func record(_ row: Row) -> StoredRecord {
        StoredRecord(id: row["id"], data: row["data"], version: row["version"], updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    /// Saves a local change (`data` for an upsert, `nil` for a deletion) and queues its mutation, in one transaction.
    func change(_ collection: SyncCollection, id: String, data: Data?, at now: Date = .now) async throws {
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

    // MARK: Queue

    /// A queued mutation, with the server version of its record as the device knows it now.
    struct PendingMutation: Sendable {
        var mutationID: String
        var collection: SyncCollection
        var recordID: String
        var operation: SyncOperation
        var baseVersion: Int?
        var updatedAt: Date
        var data: Data?
    }

    public func pendingCount() async throws -> Int {
        try await queue.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM pending_mutations")) ?? 0 }
    }

    /// The next mutations to push, oldest first, at most one per record (a later change of the same record waits for
    /// the answer to the earlier one, whose result gives its base version). Marks them sent.
    func nextBatch(limit: Int) async throws -> [PendingMutation] {
        try await queue.write { db in
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT p.seq, p.mutation_id, p.collection, p.record_id, p.op, p.data, p.updated_at, r.version
                FROM pending_mutations p LEFT JOIN records r ON r.collection = p.collection AND r.id = p.record_id
                ORDER BY p.seq LIMIT ?
                """), arguments: [limit * 4])
            var seen = Set<String>()
            var batch: [PendingMutation] = []
            var sequence: [Int64] = []
            for row in rows where batch.count < limit {
                let collectionName: String = row["collection"]
                let recordID: String = row["record_id"]
                guard seen.insert(collectionName + "/" + recordID).inserted, let collection = SyncCollection(rawValue: collectionName) else { continue }
                let version: Int? = row["version"]
                batch.append(PendingMutation(
                    mutationID: row["mutation_id"], collection: collection, recordID: recordID,
                    operation: SyncOperation(rawValue: row["op"]) ?? .upsert, baseVersion: (version ?? 0) > 0 ? version : nil,
                    updatedAt: Date(timeIntervalSince1970: row["updated_at"]), data: row["data"]
                ))
                sequence.append(row["seq"])
            }
            for seq in sequence {
                try db.run(sql: "UPDATE pending_mutations SET sent = 1 WHERE seq = ?", arguments: [seq])
            }
            return batch
        }
    }

    /// What the server answered for one pushed mutation.
    enum Settlement: Sendable {
        case applied(version: Int)
        /// The server's copy stands: `data` (nil for a tombstone) at `version`.
        case serverWins(version: Int, data: Data?, updatedAt: Date)
        case rejected
    }

    /// Removes answered mutations from the queue and brings the records in line with the answers, in one transaction.
    func settle(_ answers: [(PendingMutation, Settlement)]) async throws {
        try await queue.write { db in
            for (mutation, settlement) in answers {
                let arguments: StatementArguments = [mutation.collection.rawValue, mutation.recordID]
                try db.run(sql: "DELETE FROM pending_mutations WHERE mutation_id = ?", arguments: [mutation.mutationID])
                let waiting = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM pending_mutations WHERE collection = ? AND record_id = ?)"), arguments: arguments) ?? false
                switch settlement {
                case .applied(let version):
                    if mutation.operation == .delete && !waiting {
                        try db.run(sql: "DELETE FROM records WHERE collection = ? AND id = ?", arguments: arguments)
                    } else {
                        try db.run(sql: "UPDATE records SET version = ? WHERE collection = ? AND id = ?", arguments: [version] + arguments)
                    }
                case .serverWins(let version, let data, let updatedAt):
                    if waiting {
                        // A newer local change is queued: it will be settled against this version in turn.
                        try db.run(sql: "UPDATE records SET version = ? WHERE collection = ? AND id = ?", arguments: [version] + arguments)
                    } else {
                        try Self.put(mutation.collection, id: mutation.recordID, data: data, version: version, updatedAt: updatedAt, in: db)
                    }
                case .rejected:
                    break
                }
            }
        }
    }

    // MARK: Pulling

    /// Applies a page of the change feed and moves the cursor, in one transaction. Records with queued local changes
    /// keep them: the server settles those when they are pushed.
    func apply(_ changes: [PulledChange], cursor: String) async throws {
        try await queue.write { db in
            for change in changes {
                let queued = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM pending_mutations WHERE collection = ? AND record_id = ?)"),
                    arguments: [change.collection.rawValue, change.id]
                ) ?? false
                if queued { continue }
                try Self.put(change.collection, id: change.id, data: change.data, version: change.version, updatedAt: change.updatedAt, in: db)
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

    private static func put(_ collection: SyncCollection, id: String, data: Data?, version: Int, updatedAt: Date, in db: GRDB.Database) throws {
        guard let data else {
            try db.run(sql: "DELETE FROM records WHERE collection = ? AND id = ?", arguments: [collection.rawValue, id])
            return
        }
        try db.run(
            sql: """
                INSERT INTO records (collection, id, data, version, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (collection, id) DO UPDATE SET data = excluded.data, version = excluded.version,
                    updated_at = excluded.updated_at, resync = 0
                """,
            arguments: [collection.rawValue, id, data, version, updatedAt.timeIntervalSince1970]
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

    /// Deletes everything: records, queue and cursor (another user signed in, or the app signs out for good).
    public func erase() async throws {
        try await queue.write { db in
            try db.execute(sql: "DELETE FROM records; DELETE FROM pending_mutations; DELETE FROM sync_state;")
        }
    }
}

extension GRDB.Database {
    /// `execute(sql:arguments:)` with the statement prepared once per connection (GRDB's statement cache): syncing
    /// runs the same few statements thousands of times.
    fileprivate func run(sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

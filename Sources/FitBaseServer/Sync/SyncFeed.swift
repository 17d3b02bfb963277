import FitBaseCore
import Foundation
import SQLKit
import Synchronization

/// One entry of the feed: a record's latest change.
struct SyncChange: Sendable, Equatable {
    var collection: SyncCollection
    var recordID: String
    var seq: Int
    var stamp: RecordStamp
}

/// Writes and reads the change feed. Every write of a synced record calls ``record(_:id:of:deleted:updatedAt:on:)``
/// on the connection of the transaction that changes the record, so the feed and the data never disagree.
enum SyncFeed {
    /// The record id of the one `preferences` record each user has.
    static let preferencesID = "profile"
    /// How long tombstones are kept; a cursor older than the oldest purged tombstone must resync fully.
    static let tombstoneRetention: TimeInterval = 90 * 86_400

    /// Enters a change of `collection`/`id` into the feed: the next sequence number of the user, the next version.
    /// `updatedAt` is the writer's time (the server's for REST writes, the client's for pushed ones).
    /// `changedAt` is the server's time of the write. Pass `currentVersion` (0 for a new record) when the caller has
    /// just read the record's stamp.
    @discardableResult
    static func record(
        _ collection: SyncCollection, id: String, of user: UserID, deleted: Bool, updatedAt: Date, changedAt: Date, currentVersion: Int? = nil,
        on db: any SQLDatabase
    ) async throws -> SyncChange {
        let current = if let currentVersion { currentVersion } else { try await stamp(collection, id: id, of: user, on: db)?.version ?? 0 }
        let version = current + 1
        if let change = batched(collection, id: id, of: user, deleted: deleted, updatedAt: updatedAt, changedAt: changedAt, version: version) {
            nudge(user, now: changedAt, through: change.seq)
            return change  // written with the push's other entries (``Batch``)
        }
        let seq: Int
        if db.dialect.name == "postgresql" {
            // The number and the entry in one round trip.
            guard let row = try await takeSequenceAndUpsertChange(user.rawValue, collection.rawValue, id, version, deleted, updatedAt, changedAt).first(on: db)
            else { throw SyncFeedError.noSequence }
            seq = try row.decode(column: "seq", as: Int.self)
        } else {
            seq = try await nextSequence(of: user, on: db)
            try await upsertChange(user.rawValue, collection.rawValue, id, seq, version, deleted, updatedAt, changedAt).run(on: db)
        }
        nudge(user, now: changedAt, through: seq)
        return SyncChange(collection: collection, recordID: id, seq: seq, stamp: RecordStamp(version: version, updatedAt: updatedAt, deleted: deleted))
    }

    private static let upsertChange = StoredStatement(
        #"INSERT INTO "sync_changes" ("user_id", "collection", "record_id", "seq", "version", "deleted", "updated_at", "changed_at") "#
            + #"VALUES (?, ?, ?, ?, ?, ?, ?, ?) "# + onConflictReplace
    )

    /// ``takeSequence`` and ``upsertChange`` in one statement (PostgreSQL).
    private static let takeSequenceAndUpsertChange = StoredStatement(
        postgresOnly: #"WITH "taken" AS (INSERT INTO "sync_sequences" ("user_id", "last_seq", "purged_through") VALUES ($1, 1, 0) "#
            + #"ON CONFLICT ("user_id") DO UPDATE SET "last_seq" = "sync_sequences"."last_seq" + 1 RETURNING "last_seq") "#
            + #"INSERT INTO "sync_changes" ("user_id", "collection", "record_id", "seq", "version", "deleted", "updated_at", "changed_at") "#
            + #"SELECT $1, $2, $3, "last_seq", $4, $5, $6, $7 FROM "taken" "# + onConflictReplace + #" RETURNING "seq""#
    )

    /// ``upsertChange`` for many entries (of distinct records).
    static let upsertChanges = StoredRowsStatement(
        head: #"INSERT INTO "sync_changes" ("user_id", "collection", "record_id", "seq", "version", "deleted", "updated_at", "changed_at") VALUES "#,
        row: "(?, ?, ?, ?, ?, ?, ?, ?)", tail: " " + onConflictReplace
    )

    private static let onConflictReplace =
        #"ON CONFLICT ("user_id", "collection", "record_id") DO UPDATE SET "#
        + #""seq" = EXCLUDED."seq", "version" = EXCLUDED."version", "deleted" = EXCLUDED."deleted", "#
        + #""updated_at" = EXCLUDED."updated_at", "changed_at" = EXCLUDED."changed_at""#

    // MARK: Entries kept on the records' rows

    /// Collections whose live feed entries are kept on the records' own rows (by table) instead of in `sync_changes`.
    ///
    /// Health samples are written once and many at a time: a year of minute-level heart rate is half a million. A
    /// `sync_changes` row per sample also wrote a random place of the feed's record index for each one; on SQLite that
    /// index alone doubled what every upload wrote. Instead a sample's row carries its entry: `seq`, `version` and
    /// `updated_at` columns, indexed by (`user_id`, `seq`), so storing a batch writes its rows in time order and nothing
    /// else. A tombstone is a `sync_changes` row as in every collection; a record stored again after its deletion
    /// takes its tombstone's place with the next version (``entered(_:ids:of:now:on:)``). The record ids are UUIDs, in
    /// lower case.
    static let rowFeeds: [SyncCollection: RowFeed] = [.healthSamples: RowFeed(table: "health_samples")]

    /// A row-feed collection's table and its statements.
    struct RowFeed: Sendable {
        let table: String
        let changes: StoredStatement
        let stamps: StoredRowsStatement
        let setVersion: StoredStatement

        init(table: String) {
            self.table = table
            changes = StoredStatement(
                #"SELECT "id", "seq", "version", "updated_at" FROM "\#(table)" WHERE "user_id" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?"#
            )
            stamps = StoredRowsStatement(head: #"SELECT "id", "version", "updated_at" FROM "\#(table)" WHERE "user_id" = ? AND "id" IN ("#, row: "?", tail: ")")
            setVersion = StoredStatement(#"UPDATE "\#(table)" SET "version" = ? WHERE "user_id" = ? AND "id" = ?"#)
        }
    }

    /// Reserves `count` consecutive sequence numbers of the user for records stored with their entries on their rows
    /// (taking the user's sequence row for the rest of the transaction); the first. Numbers of records not stored in
    /// the end are skipped by every cursor, as those of replaced entries are.
    static func reserve(_ count: Int, of user: UserID, on db: any SQLDatabase) async throws -> Int {
        let first = if let batched = batchedNumbers(count, of: user) { batched } else { try await reserveBlock(count, of: user, on: db) }
        highestSequence(of: user)?.raise(to: first + count - 1)
        return first
    }

    /// ``reserve(_:of:on:)`` in the database, whatever batch is installed.
    static func reserveBlock(_ count: Int, of user: UserID, on db: any SQLDatabase) async throws -> Int {
        guard let reserved = try await reserveSequences(user.rawValue, count, count).first(on: db) else { throw SyncFeedError.noSequence }
        return try reserved.decode(column: "last_seq", as: Int.self) - count + 1
    }

    private static let reserveSequences = StoredStatement(
        #"INSERT INTO "sync_sequences" ("user_id", "last_seq", "purged_through") VALUES (?, ?, 0) "#
            + #"ON CONFLICT ("user_id") DO UPDATE SET "last_seq" = "sync_sequences"."last_seq" + ? RETURNING "last_seq""#
    )

    /// Records of a row-feed collection just stored with version 1 on reserved numbers: the user's devices are told,
    /// and those that had a tombstone take its place with the next version. Returns those records' versions.
    static func entered(_ collection: SyncCollection, ids: [UUID], of user: UserID, now: Date, on db: any SQLDatabase) async throws -> [UUID: Int] {
        guard let feed = rowFeeds[collection], !ids.isEmpty else { return [:] }
        nudge(user, now: now, through: nil)
        try await Batch.flushCurrent(on: db)
        // Most users never deleted a record of the collection: one probe of the record index answers for the batch.
        guard try await selectAnyEntry(user.rawValue, collection.rawValue).first(on: db) != nil else { return [:] }
        var versions: [UUID: Int] = [:]
        for start in stride(from: 0, to: ids.count, by: 250) {
            let chunk = ids[start..<min(start + 250, ids.count)]
            let binds: [any Encodable & Sendable] = [user.rawValue, collection.rawValue, true] + chunk.map { $0.lowercasedString as any Encodable & Sendable }
            for row in try await deleteTombstones(rows: chunk.count, binds).all(on: db) {
                guard let id = UUID(uuidString: try row.decode(column: "record_id", as: String.self)) else { continue }
                versions[id] = try row.decode(column: "version", as: Int.self) + 1
            }
        }
        for (id, version) in versions {
            try await feed.setVersion(version, user.rawValue, id).run(on: db)
        }
        return versions
    }

    private static let selectAnyEntry = StoredStatement(#"SELECT 1 AS "found" FROM "sync_changes" WHERE "user_id" = ? AND "collection" = ? LIMIT 1"#)

    private static let deleteTombstones = StoredRowsStatement(
        head: #"DELETE FROM "sync_changes" WHERE "user_id" = ? AND "collection" = ? AND "deleted" = ? AND "record_id" IN ("#,
        row: "?", tail: #") RETURNING "record_id", "version""#
    )

    /// The live entries of a row-feed collection after `since`, oldest first, at most `limit`.
    private static func rowChanges(_ collection: SyncCollection, feed: RowFeed, of user: UserID, since: Int, limit: Int, on db: any SQLDatabase) async throws -> [SyncChange] {
        try await feed.changes(user.rawValue, since, limit).all(on: db).map { row in
            SyncChange(
                collection: collection, recordID: try row.decode(column: "id", as: UUID.self).lowercasedString, seq: try row.decode(column: "seq", as: Int.self),
                stamp: RecordStamp(version: try row.decode(column: "version", as: Int.self), updatedAt: try row.decode(column: "updated_at", as: Date.self), deleted: false)
            )
        }
    }

    /// The live stamps of those of `ids` whose rows the user has in a row-feed collection's table, by id as given.
    private static func rowStamps(_ ids: [String], feed: RowFeed, of user: UserID, on db: any SQLDatabase) async throws -> [String: RecordStamp] {
        var byUUID: [UUID: [String]] = [:]
        for id in ids { if let uuid = UUID(uuidString: id) { byUUID[uuid, default: []].append(id) } }
        let uuids = Array(byUUID.keys)
        var stamps: [String: RecordStamp] = [:]
        for start in stride(from: 0, to: uuids.count, by: 250) {
            let chunk = uuids[start..<min(start + 250, uuids.count)]
            for row in try await feed.stamps(rows: chunk.count, [user.rawValue] + chunk.map { $0 as any Encodable & Sendable }).all(on: db) {
                let stamp = RecordStamp(version: try row.decode(column: "version", as: Int.self), updatedAt: try row.decode(column: "updated_at", as: Date.self), deleted: false)
                for id in byUUID[try row.decode(column: "id", as: UUID.self)] ?? [] { stamps[id] = stamp }
            }
        }
        return stamps
    }

    /// Tells the user's devices, once per transaction and just before it commits, that changes are available up to the
    /// user's latest sequence number: a `sync` event (`{"cursor": …}`) on their realtime stream, created at `now`
    /// (the transaction's first write's time).
    ///
    /// `through` is the number the caller just took: the user's sequence row stays taken by the transaction from its
    /// first number to the commit, so the highest number it took is the user's last, and the event needs no read of
    /// it. (`nil`: the caller took none; a transaction that took numbers nobody reported reads the row.)
    private static func nudge(_ user: UserID, now: Date, through seq: Int?) {
        guard let hooks = TransactionHooks.current, let highest = highestSequence(of: user) else { return }
        if let seq { highest.raise(to: seq) }
        hooks.beforeCommit(key: "sync-nudge/\(user)") { db in
            let last = if let known = highest.value { known } else { try await SyncFeed.position(of: user, on: db).last }
            try await EventLog.append(topic: .user(user), type: "sync", data: ["cursor": SyncWire.cursor(sequence: last)], now: now, on: db)
        }
    }

    /// The highest sequence number of `user` the current transaction took (`nil` outside a transaction).
    private static func highestSequence(of user: UserID) -> HighestSequence? {
        TransactionHooks.current?.value("sync-highest/\(user)") { HighestSequence() }
    }

    /// The highest number a transaction took of one user's sequence, once it took any.
    private final class HighestSequence: Sendable {
        private let highest = Mutex<Int?>(nil)

        var value: Int? { highest.withLock { $0 } }

        func raise(to seq: Int) {
            highest.withLock { $0 = max($0 ?? seq, seq) }
        }
    }

    private static let selectStamp = StoredStatement(
        #"SELECT "version", "updated_at", "deleted" FROM "sync_changes" WHERE "user_id" = ? AND "collection" = ? AND "record_id" = ?"#
    )

    /// What the feed holds for a record; `nil` when it never existed.
    static func stamp(_ collection: SyncCollection, id: String, of user: UserID, on db: any SQLDatabase) async throws -> RecordStamp? {
        try await Batch.flushCurrent(on: db)
        if let feed = rowFeeds[collection], let live = try await rowStamps([id], feed: feed, of: user, on: db)[id] { return live }
        return try await selectStamp(user.rawValue, collection.rawValue, id).first(on: db)
            .map { RecordStamp(version: try $0.decode(column: "version", as: Int.self), updatedAt: try $0.decode(column: "updated_at", as: Date.self), deleted: try $0.decode(column: "deleted", as: Bool.self)) }
    }

    /// What the feed holds for those of `ids` that ever existed, by id.
    static func stamps(_ collection: SyncCollection, ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: RecordStamp] {
        try await Batch.flushCurrent(on: db)
        var stamps: [String: RecordStamp] = [:]
        for start in stride(from: 0, to: ids.count, by: 250) {
            let chunk = ids[start..<min(start + 250, ids.count)]
            let binds: [any Encodable & Sendable] = [user.rawValue, collection.rawValue] + chunk.map { $0 as any Encodable & Sendable }
            for row in try await selectStamps(rows: chunk.count, binds).all(on: db) {
                stamps[try row.decode(column: "record_id", as: String.self)] = RecordStamp(
                    version: try row.decode(column: "version", as: Int.self), updatedAt: try row.decode(column: "updated_at", as: Date.self),
                    deleted: try row.decode(column: "deleted", as: Bool.self)
                )
            }
        }
        if let feed = rowFeeds[collection] {
            stamps.merge(try await rowStamps(ids, feed: feed, of: user, on: db)) { _, live in live }
        }
        return stamps
    }

    private static let selectStamps = StoredRowsStatement(
        head: #"SELECT "record_id", "version", "updated_at", "deleted" FROM "sync_changes" WHERE "user_id" = ? AND "collection" = ? AND "record_id" IN ("#,
        row: "?", tail: ")"
    )

    /// Changes after `since`, oldest first, at most `limit`.
    static func changes(of user: UserID, since: Int, limit: Int, on db: any SQLDatabase) async throws -> [SyncChange] {
        try await Batch.flushCurrent(on: db)
        var changes = try await entries(of: user, since: since, limit: limit, on: db)
        for (collection, feed) in rowFeeds.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            changes += try await rowChanges(collection, feed: feed, of: user, since: since, limit: limit, on: db)
        }
        guard !rowFeeds.isEmpty else { return changes }
        return Array(changes.sorted { $0.seq < $1.seq }.prefix(limit))
    }

    /// The `sync_changes` rows after `since`, oldest first, at most `limit`.
    private static func entries(of user: UserID, since: Int, limit: Int, on db: any SQLDatabase) async throws -> [SyncChange] {
        try await db.select().columns("collection", "record_id", "seq", "version", "deleted", "updated_at").from("sync_changes")
            .where("user_id", .equal, user.rawValue).where("seq", .greaterThan, since)
            .orderBy("seq").limit(limit).all()
            .compactMap { row in
                guard let collection = SyncCollection(rawValue: try row.decode(column: "collection", as: String.self)) else { return nil }
                return SyncChange(
                    collection: collection, recordID: try row.decode(column: "record_id", as: String.self), seq: try row.decode(column: "seq", as: Int.self),
                    stamp: RecordStamp(
                        version: try row.decode(column: "version", as: Int.self), updatedAt: try row.decode(column: "updated_at", as: Date.self),
                        deleted: try row.decode(column: "deleted", as: Bool.self)
                    )
                )
            }
    }

    private static let selectPosition = StoredStatement(#"SELECT "last_seq", "purged_through" FROM "sync_sequences" WHERE "user_id" = ?"#)

    /// The user's last sequence number and the highest purged one (0 and 0 before the first change).
    static func position(of user: UserID, on db: any SQLDatabase) async throws -> (last: Int, purgedThrough: Int) {
        guard let row = try await selectPosition(user.rawValue).first(on: db) else { return (0, 0) }
        return (try row.decode(column: "last_seq", as: Int.self), try row.decode(column: "purged_through", as: Int.self))
    }

    /// Deletes tombstones changed before `cutoff` (and pushed-mutation results as old), remembering per user the
    /// highest purged sequence number. Returns how many tombstones went.
    @discardableResult
    static func purge(before cutoff: Date, database: Database) async throws -> Int {
        try await database.transaction { db in
            let rows = try await db.select().columns("user_id", "seq").from("sync_changes")
                .where("deleted", .equal, true).where("changed_at", .lessThan, cutoff).all()
            var highest: [UUID: Int] = [:]
            for row in rows {
                let user = try row.decode(column: "user_id", as: UUID.self)
                highest[user] = max(highest[user] ?? 0, try row.decode(column: "seq", as: Int.self))
            }
            for (user, seq) in highest {
                try await db.update("sync_sequences").set("purged_through", to: seq)
                    .where("user_id", .equal, user).where("purged_through", .lessThan, seq).run()
            }
            try await db.delete(from: "sync_changes").where("deleted", .equal, true).where("changed_at", .lessThan, cutoff).run()
            try await db.delete(from: "sync_mutations").where("created_at", .lessThan, cutoff).run()
            return rows.count
        }
    }

    /// Takes the user's sequence row for the rest of the transaction (creating it if needed), so concurrent
    /// transactions of the user that write the feed run one after the other.
    static func lockSequence(of user: UserID, on db: any SQLDatabase) async throws {
        try await db.insert(into: "sync_sequences").columns("user_id", "last_seq", "purged_through")
            .values(SQLBind(user.rawValue), SQLBind(0), SQLBind(0))
            .onConflict(with: ["user_id"]) { $0.set("last_seq", to: SQLRaw("sync_sequences.last_seq")) }
            .run()
    }

    private static let takeSequence = StoredStatement(
        #"INSERT INTO "sync_sequences" ("user_id", "last_seq", "purged_through") VALUES (?, 1, 0) "#
            + #"ON CONFLICT ("user_id") DO UPDATE SET "last_seq" = "sync_sequences"."last_seq" + 1 RETURNING "last_seq""#
    )

    private static func nextSequence(of user: UserID, on db: any SQLDatabase) async throws -> Int {
        let row = try await takeSequence(user.rawValue).first(on: db)
        guard let row else { throw SyncFeedError.noSequence }
        return try row.decode(column: "last_seq", as: Int.self)
    }
}

enum SyncFeedError: Error {
    case noSequence
}

import FitBaseAPI
import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// One synced collection, declared by its feature: how a pushed record is checked, written and deleted, and how the
/// change feed shows it. REST handlers and `POST /v1/sync/push` write through the same ``SyncedWrite/write(_:on:)``
/// and ``delete(_:_:on:)``, so a record's effects (its row, its feed entry, challenge scoring, events) are declared
/// once, in one order, in the feature that owns the record.
///
/// A feature adds a collection by conforming a type in its folder and listing it in ``SyncedCollections/init(_:)``
/// (see ARCHITECTURE.md).
protocol SyncedCollection: Sendable {
    /// The feed's name for the collection.
    var collection: SyncCollection { get }
    /// The table holding the records (keyed by `id`, owned through `user_id`), for the ownership check of a pushed
    /// id; `nil` when the collection has no rows of its own (preferences).
    var table: String? { get }
    /// Whether a record stored once is never changed again: sending it again is a no-op (health samples).
    var isWrittenOnce: Bool { get }
    /// Whether the records are sealed at rest, so that they never appear in stored push results (the answer to a
    /// replayed conflict names the version only; health samples, periods, workout logs).
    var isSealed: Bool { get }

    /// The record id in its canonical form; throws a problem naming `id` when the mutation's id cannot be one.
    func recordID(_ raw: String) throws(Problem) -> String
    /// Runs once per push before the collection's mutations are checked (reads they share, audits of refusals).
    func prepare(_ mutations: [Components.Schemas.SyncMutation], reads: PushReads) async throws
    /// Checks an upsert's `data` exactly as the collection's REST endpoint checks a body (field paths relative to
    /// `data`), giving the write to make.
    func checkUpsert(_ data: Components.Schemas.SyncRecordData?, id: String, reads: PushReads, updatedAt: Date) async throws -> any SyncedWrite
    /// Checks a delete before anything is written (consent, a record that cannot be deleted).
    func checkDelete(id: String, reads: PushReads) async throws
    /// Deletes the user's record and takes back its effects, entering a tombstone into the feed; `nil` when the user
    /// has no such row.
    func delete(_ id: String, _ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange?
    /// The records with these ids, as their REST endpoints show them, by record id.
    func records(_ ids: [String], of user: UserID, on db: any SQLDatabase) async throws -> [String: Components.Schemas.SyncRecordData]
    /// After a push applied `count` of the collection's mutations, in its transaction (audit).
    func pushed(_ count: Int, of user: UserID, now: Date, on db: any SQLDatabase) async throws
    /// After a feed page served `count` of the collection's live records (audit).
    func pulled(_ count: Int, of user: UserID) async throws
}

extension SyncedCollection {
    var isWrittenOnce: Bool { false }
    var isSealed: Bool { false }

    func recordID(_ raw: String) throws(Problem) -> String {
        guard let id = UUID(uuidString: raw) else {
            throw Problem.invalidRequest("id must be a UUID.", fieldErrors: [.init(field: "id", message: "must be a UUID")])
        }
        return id.lowercasedString
    }

    func prepare(_ mutations: [Components.Schemas.SyncMutation], reads: PushReads) async throws {}
    func checkDelete(id: String, reads: PushReads) async throws {}
    func pushed(_ count: Int, of user: UserID, now: Date, on db: any SQLDatabase) async throws {}
    func pulled(_ count: Int, of user: UserID) async throws {}

    /// A REST delete: the collection's delete path, in a transaction of its own; whether the user had the record.
    func delete(_ id: String, of user: UserID, now: Date, in database: Database) async throws -> Bool {
        try await database.transaction(groupedBy: user.rawValue) { db in try await delete(id, .rest(user, now), on: db) != nil }
    }

    /// Records as the feed shows them, by id: each in its REST representation.
    func wire<Record>(_ records: [Record], id: (Record) -> String, _ wire: (Record) -> some Encodable & Sendable) -> [String: Components.Schemas.SyncRecordData] {
        var wired: [String: Components.Schemas.SyncRecordData] = [:]
        for record in records { wired[id(record)] = SyncWire.object(wire(record)) }
        return wired
    }

    /// Decodes a mutation's `data` as the collection's REST body.
    func decode<Body: Decodable>(_ type: Body.Type, from data: Components.Schemas.SyncRecordData?) throws(Problem) -> Body {
        try SyncWire.decode(type, from: data)
    }
}

/// A checked record, ready to be written with its effects: the one write path of its collection.
protocol SyncedWrite: Sendable {
    /// Writes the record, its feed entry and its effects on `db` (inside the caller's transaction). A problem thrown
    /// before anything is written (a limit, a rule that needs the transaction) rejects the write alone.
    func write(_ write: FeedWrite, on db: any SQLDatabase) async throws -> SyncChange
    /// Whether the write can fail after it has written (a constraint: another period starting the same day; a quota:
    /// the account's health samples). A push runs such a write inside a savepoint, to reject it alone.
    var canViolateConstraint: Bool { get }
    /// The problem a constraint violation of this write means; `nil` for any other error.
    func problem(forViolation error: any Error) -> Problem?
}

extension SyncedWrite {
    var canViolateConstraint: Bool { false }
    func problem(forViolation error: any Error) -> Problem? { nil }
}

/// Who writes a synced record, and when.
struct FeedWrite: Sendable {
    var user: UserID
    /// The server's time.
    var now: Date
    /// The writer's time: the server's for REST writes, the client's for pushed ones.
    var updatedAt: Date
    /// The record's version as the writer just read it from the feed (0 for a new record); `nil` to read it.
    var currentVersion: Int?

    /// A REST write: stamped with the server's time.
    static func rest(_ user: UserID, _ now: Date) -> FeedWrite {
        FeedWrite(user: user, now: now, updatedAt: now, currentVersion: nil)
    }

    /// A REST create under an id the server has just generated: no feed entry can exist yet, so none is read.
    static func created(_ user: UserID, _ now: Date) -> FeedWrite {
        FeedWrite(user: user, now: now, updatedAt: now, currentVersion: 0)
    }

    /// Enters the change of `collection`/`id` into the feed.
    func record(_ collection: SyncCollection, id: String, deleted: Bool, on db: any SQLDatabase) async throws -> SyncChange {
        try await SyncFeed.record(collection, id: id, of: user, deleted: deleted, updatedAt: updatedAt, changedAt: now, currentVersion: currentVersion, on: db)
    }
}

/// Every synced collection, by name.
struct SyncedCollections: Sendable {
    private let byName: [SyncCollection: any SyncedCollection]

    init(_ collections: [any SyncedCollection]) {
        byName = Dictionary(uniqueKeysWithValues: collections.map { ($0.collection, $0) })
        precondition(Set(byName.keys) == Set(SyncCollection.allCases), "every synced collection is registered once")
    }

    subscript(_ collection: SyncCollection) -> any SyncedCollection {
        // The initializer checked that every case is present.
        byName[collection]!
    }

    var all: [any SyncedCollection] { SyncCollection.allCases.map { self[$0] } }
}

/// What checking one push reads, read at most once however many of its mutations need it.
actor PushReads {
    let caller: Caller
    /// The push's time: rules about the present (a workout cannot be logged in the future) are checked against it.
    nonisolated let now: Date
    private var values: [String: any Sendable] = [:]

    init(caller: Caller, now: Date) {
        self.caller = caller
        self.now = now
    }

    nonisolated var user: UserID { caller.user }

    /// The value under `key`, loaded by `load` the first time it is asked for.
    func once<Value: Sendable>(_ key: String, _ load: @Sendable () async throws -> Value) async throws -> Value {
        // Unwrapped first: a missing entry cast to an optional `Value` would pass as a stored `nil`.
        if let stored = values[key], let value = stored as? Value { return value }
        let value = try await load()
        values[key] = value
        return value
    }
}

/// A synced collection whose records the audit log watches (periods, workout logs): REST writes and deletes are
/// audited in their own transaction, pushes and pulls as `sync`, reads through ``audited(read:of:)``.
protocol AuditedCollection: SyncedCollection {
    var database: Database { get }
    var audit: AuditLog { get }
    /// The audit log's name for the records.
    static var resource: AuditResource { get }
}

extension AuditedCollection {
    /// Runs `body` in a transaction that also records `action` on one of `user`'s records at `now`.
    func audited<Result: Sendable>(
        _ action: AuditAction, by user: UserID, now: Date, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        let engine = database.engine
        return try await database.transaction(groupedBy: user.rawValue) { db in
            let result = try await body(db)
            try await AuditLog.appendAtCommit(AuditEvent(actor: user, subject: user, action: action, resource: Self.resource, count: 1), now: now, on: db, engine: engine)
            return result
        }
    }

    /// A REST delete with its effects and its audit entry; whether the user had the record.
    func auditedDelete(_ id: String, of user: UserID, now: Date) async throws -> Bool {
        let engine = database.engine
        return try await database.transaction(groupedBy: user.rawValue) { db in
            guard try await delete(id, .rest(user, now), on: db) != nil else { return false }
            try await AuditLog.appendAtCommit(AuditEvent(actor: user, subject: user, action: .delete, resource: Self.resource, count: 1), now: now, on: db, engine: engine)
            return true
        }
    }

    /// Records a read of `count` of the user's records, when there were any.
    func audited(read count: Int, of user: UserID) async throws {
        guard count > 0 else { return }  // nothing of theirs was read
        try await audit.append(AuditEvent(actor: user, subject: user, action: .read, resource: Self.resource, count: count))
    }

    func pushed(_ count: Int, of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await AuditLog.append(AuditEvent(actor: user, subject: user, action: .sync, resource: Self.resource, count: count), now: now, on: db, engine: database.engine)
    }

    func pulled(_ count: Int, of user: UserID) async throws {
        try await audit.append(AuditEvent(actor: user, subject: user, action: .sync, resource: Self.resource, count: count))
    }
}

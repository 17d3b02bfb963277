import FitBaseCore
import Foundation
import NIOCore
import OpenAPIRuntime
import SQLKit

/// A feature's share of an account: what it exports for the user and how it deletes it.
///
/// Every feature that stores rows for a user adds an owner to the registry, so account export and deletion cover
/// it without the accounts feature knowing its tables.
protocol AccountDataOwner: Sendable {
    /// The export section's name, e.g. `consents`.
    var section: String { get }
    /// Writes the user's data of this feature as one JSON value (dates as RFC 3339 strings, keys sorted), in as many
    /// pieces as it likes: a section of any size is read and written a page at a time.
    func writeExport(_ user: UserID, database: Database, to write: ExportWriter) async throws
    /// Deletes every row of this feature that belongs to the user, inside the deletion transaction begun at `now`.
    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws
}

/// An owner that may hold more of an account's rows than one transaction should delete (health samples): they go in
/// batches, each its own transaction, after the account was made unreachable and before the final transaction.
protocol BulkAccountDataOwner: AccountDataOwner {
    /// Deletes the user's rows in batches; safe to run again after an interruption.
    func deleteInBatches(_ user: UserID, database: Database) async throws
}

/// Where an export's bytes go as they are made: the response, or a buffer.
typealias ExportWriter = (ByteBuffer) async throws -> Void

/// An owner whose section is small enough to build whole (a profile, consents, a few hundred logs).
protocol InMemoryAccountDataOwner: AccountDataOwner {
    /// The user's data of this feature as JSON (dates as RFC 3339 strings).
    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer
}

extension InMemoryAccountDataOwner {
    /// An export section listing the user's rows of `table` (their `user_id`) in `order`, each as the JSON object `entry`
    /// makes of its `columns`.
    func exportRows(
        of user: UserID, _ columns: [String], from table: String, orderBy order: String, on db: any SQLDatabase,
        _ entry: (any SQLRow) throws -> [String: (any Sendable)?]
    ) async throws -> OpenAPIValueContainer {
        let rows = try await db.select().columns(columns).from(table).where("user_id", .equal, user.rawValue).orderBy(order).all()
        return try .exportList(rows, entry)
    }

    func writeExport(_ user: UserID, database: Database, to write: ExportWriter) async throws {
        let value = try await database.withConnection { db in try await export(user, on: db) }
        try await write(ByteBuffer(bytes: try DirectRoute.encoder.encode(value)))
    }
}

extension OpenAPIValueContainer {
    /// An export section listing `items`, each as the JSON object `entry` makes of it.
    static func exportList<Item>(_ items: [Item], _ entry: (Item) throws -> [String: (any Sendable)?]) throws -> OpenAPIValueContainer {
        try OpenAPIValueContainer(unvalidatedValue: try items.map { item -> (any Sendable)? in try entry(item) })
    }
}

/// All features' owners, in registration order (deletion runs in reverse, dependents first).
struct AccountDataRegistry: Sendable {
    let owners: [any AccountDataOwner]

    /// The account export (`GET /v1/me/export`) as the contract's `AccountExport` — `exportedAt`, every section by
    /// name, `userId`, keys sorted as the generated server writes them — written as it is read: the server holds one
    /// page of a section at a time, whatever the account's size.
    func writeExport(_ user: UserID, exportedAt: Date, database: Database, to write: ExportWriter) async throws {
        try await write(ByteBuffer(string: #"{"exportedAt":"#))
        try await write(ByteBuffer(bytes: try DirectRoute.encoder.encode(exportedAt)))
        try await write(ByteBuffer(string: #","sections":{"#))
        for (index, owner) in owners.sorted(by: { $0.section < $1.section }).enumerated() {
            if index > 0 { try await write(ByteBuffer(string: ",")) }
            try await write(ByteBuffer(bytes: try DirectRoute.encoder.encode(owner.section) + Data(":".utf8)))
            try await owner.writeExport(user, database: database, to: write)
        }
        try await write(ByteBuffer(string: #"},"userId":"#))
        try await write(ByteBuffer(bytes: try DirectRoute.encoder.encode(user.description) + Data("}".utf8)))
    }

    /// Deletes an account of any size without holding the database's writer for long:
    /// 1. one transaction makes it unreachable at once — marked `deleting_at`, its password and address gone (the
    ///    address is free again) — and deletes every feature's rows but the bulk owners': sessions end (and with
    ///    them their tokens, streams and push devices), identities go (Apple's token is revoked; a provider sign-in
    ///    makes a new account);
    /// 2. the bulk owners delete their rows in batches, a transaction each;
    /// 3. one transaction deletes what is left of them, the account, and the realtime events that name the user
    ///    (what must still be heard names only sessions: their streams end).
    /// Interrupted, it is finished by ``finishInterruptedDeletions(database:startedBefore:now:)`` (housekeeping runs it).
    func deleteAccount(_ user: UserID, now: Date, database: Database) async throws {
        try await database.transaction { db in try await beginDeletion(of: user, now: now, on: db) }
        try await finishDeletion(of: user, now: now, database: database)
    }

    /// Step 1 of ``deleteAccount(_:now:database:)``, in the caller's transaction (a provider sign-in that replaces an
    /// account never verified); the caller runs ``finishDeletion(of:now:database:)`` after its commit.
    func beginDeletion(of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await UserStore.lockOut(user, now: now, on: db)
        for owner in owners.reversed() where !(owner is any BulkAccountDataOwner) { try await owner.delete(user, now: now, on: db) }
    }

    /// Steps 2 and 3 of ``deleteAccount(_:now:database:)``.
    func finishDeletion(of user: UserID, now: Date, database: Database) async throws {
        let bulk = owners.compactMap { $0 as? any BulkAccountDataOwner }
        for owner in bulk.reversed() { try await owner.deleteInBatches(user, database: database) }
        try await database.transaction { db in
            for owner in bulk.reversed() { try await owner.delete(user, now: now, on: db) }
            try await db.delete(from: "users").where("id", .equal, user.rawValue).run()
            try await EventLog.purge(naming: user, on: db)
        }
    }

    /// Finishes the deletions an instance began and did not end (it stopped, or the database went away); returns how
    /// many.
    @discardableResult
    func finishInterruptedDeletions(database: Database, startedBefore cutoff: Date, now: Date) async throws -> Int {
        let pending = try await database.withConnection { db in try await UserStore.deleting(startedBefore: cutoff, on: db) }
        for user in pending { try await deleteAccount(user, now: now, database: database) }
        return pending.count
    }
}

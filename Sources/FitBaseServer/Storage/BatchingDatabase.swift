import Foundation
import Logging
import NIOCore
import SQLKit
import Synchronization

/// A user's row written by `INSERT … ON CONFLICT ("id") DO UPDATE … WHERE` the row is theirs `RETURNING …`: the one
/// statement that writes a synced record's row, stored for one row and for many.
///
/// Run on a ``BatchingDatabase`` (a sync push), ``upsertSoon(_:_:on:)`` does not run at once: the row waits beside
/// the others of its table and they are written as one multi-row statement before the next statement of any other kind.
/// A push of 500 workout logs makes two statements instead of 500 round trips; PostgreSQL parses, plans and answers
/// each statement, so this is where a push spent most of its time there.
struct OwnedRowUpsert: Sendable {
    let table: String
    /// One row.
    let single: StoredStatement
    /// Many rows, the same statement otherwise.
    let rows: StoredRowsStatement
    /// Binds per row.
    let width: Int

    /// The statement for `columns` (binds in that order; they include `id` and `user_id`), replacing `updating` of a
    /// row that is the same user's, returning `id` and `returning`.
    init(table: String, columns: [String], updating: [String], returning: [String] = []) {
        precondition(columns.contains("id") && columns.contains("user_id"), "an owned row has an id and a user")
        self.table = table
        self.width = columns.count
        let head = #"INSERT INTO "\#(table)" ("# + columns.map { #""\#($0)""# }.joined(separator: ", ") + ") VALUES "
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let tail = #" ON CONFLICT ("id") DO UPDATE SET "# + updating.map { #""\#($0)" = EXCLUDED."\#($0)""# }.joined(separator: ", ")
            + #" WHERE "\#(table)"."user_id" = EXCLUDED."user_id" RETURNING "# + (["id"] + returning).map { #""\#($0)""# }.joined(separator: ", ")
        single = StoredStatement(head + row + tail)
        rows = StoredRowsStatement(head: head, row: row, tail: tail)
    }

    /// Writes the row now and returns it as written; ``RecordIDTaken`` (nothing written) when `id` is another user's.
    func upsert(_ binds: [any Encodable & Sendable], on db: any SQLDatabase) async throws -> any SQLRow {
        guard let row = try await single.with(binds).first(on: db) else { throw RecordIDTaken() }
        return row
    }

    /// Writes the row of `id`: now, or with the next statement on a ``BatchingDatabase`` (where a row that turns out to
    /// be another user's fails the whole batch with ``BatchedRowRefused``).
    func upsertSoon(_ id: UUID, _ binds: [any Encodable & Sendable], on db: any SQLDatabase) async throws {
        if let batching = db as? BatchingDatabase {
            try await batching.add(id, binds, to: self)
        } else {
            _ = try await upsert(binds, on: db)
        }
    }
}

/// A row a ``BatchingDatabase`` wrote later was not written: its id is another user's (taken between the push's check of
/// the ids and its write). The work is to be done again without batching, which names the mutation at fault.
struct BatchedRowRefused: Error {
    var table: String
}

/// A database (one transaction's connection) that collects ``OwnedRowUpsert`` rows and writes each table's as one
/// statement right before the next statement of any other kind, and at ``flush()``: the database sees the same writes
/// in the same order, in fewer statements.
///
/// Only what runs through this value flushes the rows first, so the transaction's body must use it for everything (a
/// sync push hands it down as its `db`).
final class BatchingDatabase: SQLDatabase {
    /// Rows per statement: far below both engines' limits on binds (PostgreSQL 65,535; SQLite 32,766).
    static let rowsPerStatement = 250

    let base: any SQLDatabase

    private struct Waiting {
        var upsert: OwnedRowUpsert
        var ids: [UUID] = []
        var known: Set<UUID> = []
        var binds: [any Encodable & Sendable] = []
    }

    /// Waiting rows by table, in the order tables were first written.
    private let waiting = Mutex<[Waiting]>([])

    init(_ base: any SQLDatabase) {
        self.base = base
    }

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        try await flush()
        try await base.execute(sql: query, onRow)
    }

    /// Adds a row; a row whose id already waits is written first (one statement cannot change a row twice).
    fileprivate func add(_ id: UUID, _ binds: [any Encodable & Sendable], to upsert: OwnedRowUpsert) async throws {
        precondition(binds.count == upsert.width, "one bind per column")
        let repeated = waiting.withLock { waiting in waiting.contains { $0.upsert.table == upsert.table && $0.known.contains(id) } }
        if repeated { try await flush() }
        waiting.withLock { waiting in
            if let index = waiting.firstIndex(where: { $0.upsert.table == upsert.table }) {
                waiting[index].ids.append(id)
                waiting[index].known.insert(id)
                waiting[index].binds.append(contentsOf: binds)
            } else {
                waiting.append(Waiting(upsert: upsert, ids: [id], known: [id], binds: binds))
            }
        }
    }

    /// Writes every waiting row; throws ``BatchedRowRefused`` when one was another user's.
    func flush() async throws {
        let all = waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
        for table in all {
            for start in stride(from: 0, to: table.ids.count, by: Self.rowsPerStatement) {
                let end = min(start + Self.rowsPerStatement, table.ids.count)
                let binds = Array(table.binds[(start * table.upsert.width)..<(end * table.upsert.width)])
                let written = try await table.upsert.rows(rows: end - start, binds).all(on: base)
                if written.count != end - start { throw BatchedRowRefused(table: table.upsert.table) }
            }
        }
    }
}

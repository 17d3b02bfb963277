import Logging
import NIOCore
import SQLiteKit
import SQLiteNIO
import Synchronization
import VaporCSQLite

/// One SQLite connection whose statements run synchronously on the calling thread, through the C API of the SQLite
/// that SQLiteNIO links (`VaporCSQLite`). It must be that library and never a second copy: two SQLite libraries in one
/// process do not see each other's POSIX file locks, and the database file gets corrupted.
///
/// A statement reads from the page cache in microseconds, so running it inline on the Swift concurrency pool costs
/// far less than the hop to a thread pool and back that SQLiteNIO makes (GRDB runs statements inline too). A statement
/// that waits for another process's write lock sleeps on its thread for up to `busy_timeout`; in-process writers queue
/// in the ``WriteGate`` instead, without holding a thread.
///
/// Prepared statements are kept per connection, keyed by their SQL text, up to ``statementCacheCapacity`` (the least
/// recently used is finalized first); a kept statement is reset and its bindings cleared after every run.
///
/// The pool hands a connection to one task at a time. The lock serialises statements should that task share it with
/// its child tasks, which is also why SQLite's own per-connection mutex is off (`SQLITE_OPEN_NOMUTEX`).
final class SQLiteDirectConnection: Sendable {
    static let statementCacheCapacity = 64

    let logger: Logger
    /// What SQLKit's future-returning API answers on; statements never run on it.
    let eventLoop: any EventLoop
    let encoder = SQLiteDataEncoder()
    let decoder = SQLiteDataDecoder()
    private let state: Mutex<State>

    /// Opens (creating if needed) the database file at `path`, with extended result codes.
    init(path: String, logger: Logger, eventLoop: any EventLoop) throws(SQLiteReportedError) {
        _ = Self.initializeLibrary
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE
        let code = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map(Self.message(of:)) ?? "out of memory"
            sqlite_nio_sqlite3_close(handle)
            throw SQLiteReportedError(code: code, message: "cannot open \(path): \(message)")
        }
        self.logger = logger
        self.eventLoop = eventLoop
        self.state = Mutex(State(handle: handle))
    }

    /// `sqlite3_initialize` is called once per process before the first connection opens (SQLiteNIO does the same
    /// for its own connections; the call is idempotent).
    private static let initializeLibrary: Void = { _ = sqlite_nio_sqlite3_initialize() }()

    /// Runs `sql` with `binds`, calling `onRow` with each result row, in order, before it returns.
    func run(
        _ sql: String, _ binds: [SQLiteData], _ onRow: (SQLiteColumns, [SQLiteData]) -> Void
    ) throws(SQLiteReportedError) {
        try state.withLock { state throws(SQLiteReportedError) in
            guard let connection = state.handle else {
                throw SQLiteReportedError(code: SQLITE_MISUSE, message: "the connection is closed")
            }
            let statement = try state.statement(for: sql, on: connection)
            // Reset, but the bindings are not cleared: every run binds every parameter, and clearing them expires a
            // statement whose plan took note of a bound value (SQLite 3.54 notes `column = ?` terms it estimates),
            // which made SQLite prepare it again on the next run — 9 % of the CPU of a workout log.
            defer { sqlite_nio_sqlite3_reset(statement.handle) }
            try statement.bind(binds, on: connection)
            while true {
                let code = sqlite_nio_sqlite3_step(statement.handle)
                if code == SQLITE_DONE { return }
                guard code == SQLITE_ROW else { throw SQLiteReportedError(code: code, connection: connection) }
                let values = try statement.values()
                onRow(statement.columns(), values)
            }
        }
    }

    /// Rolls back a transaction left open on the connection (by a body that began one and then failed to end it), so
    /// the next task that takes the connection does not find itself inside someone else's transaction.
    func rollBackLeftoverTransaction() {
        let wasOpen = state.withLock { state -> Bool in
            guard let connection = state.handle, sqlite_nio_sqlite3_get_autocommit(connection) == 0 else { return false }
            sqlite_nio_sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
            return true
        }
        if wasOpen { logger.warning("rolled back a transaction left open on a pooled SQLite connection") }
    }

    /// Finalizes the kept statements and closes the connection; later runs fail.
    func close() {
        state.withLock { $0.close() }
    }

    deinit {
        state.withLock { $0.close() }
    }

    fileprivate static func message(of connection: OpaquePointer) -> String {
        sqlite_nio_sqlite3_errmsg(connection).map { String(cString: $0) } ?? "unknown error"
    }
}

extension SQLiteDirectConnection {
    private struct State {
        var handle: OpaquePointer?
        var statements: [String: PreparedStatement] = [:]
        var uses: UInt64 = 0

        /// The kept statement for `sql`, prepared (and the least recently used one dropped) if it is not kept yet.
        mutating func statement(for sql: String, on connection: OpaquePointer) throws(SQLiteReportedError) -> PreparedStatement {
            uses += 1
            if let statement = statements[sql] {
                statement.lastUse = uses
                return statement
            }
            var handle: OpaquePointer?
            let code = sqlite_nio_sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
            guard code == SQLITE_OK else { throw SQLiteReportedError(code: code, connection: connection) }
            guard let handle else { throw SQLiteReportedError(code: SQLITE_MISUSE, message: "no statement in the SQL text") }
            if statements.count >= SQLiteDirectConnection.statementCacheCapacity,
               let oldest = statements.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                sqlite_nio_sqlite3_finalize(oldest.value.handle)
                statements[oldest.key] = nil
            }
            let statement = PreparedStatement(handle: handle, lastUse: uses)
            statements[sql] = statement
            return statement
        }

        mutating func close() {
            for statement in statements.values { sqlite_nio_sqlite3_finalize(statement.handle) }
            statements = [:]
            sqlite_nio_sqlite3_close_v2(handle)
            handle = nil
        }
    }

    /// A kept prepared statement and the names of its result columns, read again whenever SQLite re-prepared it
    /// (after a schema change, `SELECT *` may have other columns).
    private final class PreparedStatement {
        let handle: OpaquePointer
        var lastUse: UInt64
        private var knownColumns: (columns: SQLiteColumns, reprepares: Int32)?

        init(handle: OpaquePointer, lastUse: UInt64) {
            self.handle = handle
            self.lastUse = lastUse
        }

        /// Binds `binds` to the parameters `?1…`, as SQLiteNIO binds them.
        func bind(_ binds: [SQLiteData], on connection: OpaquePointer) throws(SQLiteReportedError) {
            // A value left bound from an earlier run must never stand in for a missing one.
            guard binds.count == Int(sqlite_nio_sqlite3_bind_parameter_count(handle)) else {
                throw SQLiteReportedError(
                    code: SQLITE_RANGE, message: "\(binds.count) values for \(sqlite_nio_sqlite3_bind_parameter_count(handle)) parameters"
                )
            }
            for (index, bind) in binds.enumerated() {
                let position = Int32(index + 1)
                let code: Int32 = switch bind {
                case .integer(let value): sqlite_nio_sqlite3_bind_int64(handle, position, Int64(value))
                case .float(let value): sqlite_nio_sqlite3_bind_double(handle, position, value)
                case .text(let value):
                    sqlite_nio_sqlite3_bind_text64(handle, position, value, UInt64(value.utf8.count), transientDestructor, UInt8(SQLITE_UTF8))
                case .blob(let value):
                    value.withUnsafeReadableBytes {
                        sqlite_nio_sqlite3_bind_blob64(handle, position, $0.baseAddress, UInt64($0.count), transientDestructor)
                    }
                case .null: sqlite_nio_sqlite3_bind_null(handle, position)
                }
                guard code == SQLITE_OK else { throw SQLiteReportedError(code: code, connection: connection) }
            }
        }

        /// The result columns of the current row's statement.
        func columns() -> SQLiteColumns {
            let reprepares = sqlite_nio_sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
            if let knownColumns, knownColumns.reprepares == reprepares { return knownColumns.columns }
            let names = (0..<sqlite_nio_sqlite3_column_count(handle)).map { index in
                sqlite_nio_sqlite3_column_name(handle, index).map { String(cString: $0) } ?? ""
            }
            let columns = SQLiteColumns(names: names)
            knownColumns = (columns, reprepares)
            return columns
        }

        /// The current row's values, typed as SQLiteNIO types them (text up to its first NUL, as SQLiteNIO reads it).
        func values() throws(SQLiteReportedError) -> [SQLiteData] {
            let count = sqlite_nio_sqlite3_column_count(handle)
            var values: [SQLiteData] = []
            values.reserveCapacity(Int(count))
            for index in 0..<count {
                switch sqlite_nio_sqlite3_column_type(handle, index) {
                case SQLITE_INTEGER:
                    values.append(.integer(SQLiteInt64(sqlite_nio_sqlite3_column_int64(handle, index))))
                case SQLITE_FLOAT:
                    values.append(.float(sqlite_nio_sqlite3_column_double(handle, index)))
                case SQLITE_TEXT:
                    guard let text = sqlite_nio_sqlite3_column_text(handle, index) else {
                        throw SQLiteReportedError(code: SQLITE_NOMEM, message: "no text for a text column")
                    }
                    values.append(.text(String(cString: text)))
                case SQLITE_BLOB:
                    let length = Int(sqlite_nio_sqlite3_column_bytes(handle, index))
                    var buffer = ByteBufferAllocator().buffer(capacity: length)
                    if let bytes = sqlite_nio_sqlite3_column_blob(handle, index) {
                        buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: length))
                    }
                    values.append(.blob(buffer))
                default:
                    values.append(.null)
                }
            }
            return values
        }
    }
}

/// The names of a statement's result columns, shared by its rows; a name used twice answers with its first column.
final class SQLiteColumns: Sendable {
    let names: [String]
    /// Name to offset, for results too wide to search in order.
    private let offsets: [String: Int]?

    init(names: [String]) {
        self.names = names
        self.offsets = names.count > Self.searchedInOrder ? Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first }) : nil
    }

    /// Up to this many columns a name is looked for in order: column names fit in a small string, whose comparison
    /// is two machine words, far cheaper than hashing the name for a dictionary (every column of every row read is
    /// looked up by name).
    private static let searchedInOrder = 24

    func offset(of name: String) -> Int? {
        if let offsets { return offsets[name] }
        return names.firstIndex(of: name)
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies a bound text or blob before the bind call returns.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// An error SQLite reported, with its extended result code and its message (`UNIQUE constraint failed: users.email`).
package struct SQLiteReportedError: Error, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE` is 2067).
    package let code: Int32
    package let message: String

    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    fileprivate init(code: Int32, connection: OpaquePointer) {
        self.init(code: code, message: SQLiteDirectConnection.message(of: connection))
    }

    package var description: String {
        let name = sqlite_nio_sqlite3_errstr(code).map { String(cString: $0) } ?? "error"
        return "SQLite error \(code) (\(name)): \(message)"
    }
}

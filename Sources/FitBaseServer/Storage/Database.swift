@preconcurrency import AsyncKit
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import Synchronization

/// The one storage handle every feature store is written against: a pool of SQLKit connections to SQLite or
/// PostgreSQL, plus transactions. Stores never see which engine is underneath except through ``engine``.
package final class Database: Sendable {
    /// The engine in use; stores branch on it only for DDL and the rare dialect-specific statement.
    package let engine: DatabaseEngine
    /// Where the data lives (password-free when printed).
    package let location: DatabaseLocation
    private let pool: any SQLConnectionPool
    let logger: Logger
    /// SQLite only: queues write transactions in-process (see ``WriteGate``).
    private let writeGate: WriteGate?
    /// SQLite only: the write connection's pool and the commit groups of its transactions (``GroupCommit``).
    private let sqlite: (pool: SQLiteConnectionPool, groups: GroupCommit)?
    /// SQLite's commit groups (for tests).
    var commitGroups: GroupCommit? { sqlite?.groups }
    /// PostgreSQL only: the commit groups of one user's transactions (``KeyedCommitGroups``).
    let keyedGroups: KeyedCommitGroups?
    /// SQLite: how many callers wait for the write gate now (for tests).
    var writersWaiting: Int { writeGate?.waiting ?? 0 }
    /// SQLite only: copies the write-ahead log back in the background (see ``SQLiteCheckpointer``).
    private let checkpointer: SQLiteCheckpointer?
    private let isShutDown = Mutex(false)
    /// Callers holding or waiting for a pooled connection outside a transaction, and transactions begun and not yet
    /// ended (``poolUse``).
    private let readers = Atomic<Int>(0)
    private let transactions = Atomic<Int>(0)
    /// What this instance knows of the generations of cached data (see ``CacheGenerations``).
    package let generations: CacheGenerations
    /// This instance's open event streams: woken after every transaction that wrote events commits (and, on
    /// PostgreSQL, when another instance's does: ``EventListenerService``).
    let eventHub = EventHub()
    /// This instance's push worker (``PushWorker``): woken after every transaction that queued pushes commits.
    let pushWake = WakeSignal()

    private init(location: DatabaseLocation, pool: any SQLConnectionPool, writeGate: WriteGate?, checkpointer: SQLiteCheckpointer?, logger: Logger) {
        self.engine = location.engine
        self.location = location
        self.pool = pool
        self.logger = logger
        self.writeGate = writeGate
        self.sqlite = (pool as? SQLiteConnectionPool).map { ($0, GroupCommit()) }
        self.keyedGroups = sqlite == nil ? KeyedCommitGroups() : nil
        self.checkpointer = checkpointer
        self.generations = CacheGenerations.forDatabase(at: location)
    }

    /// Opens a pool for `location` and checks that the database answers, so a bad URL fails at start-up.
    ///
    /// Connections open lazily, up to `maxConnectionsPerEventLoop` for each loop of `eventLoopGroup`. SQLite: creates
    /// the file's directory if needed and switches the file to WAL; statements run on the calling thread (see
    /// ``SQLiteDirectConnection``); the log is copied back in the background (``SQLiteCheckpointer``; tests may turn
    /// that off and call ``checkpointPass(holdingWrites:)`` themselves). PostgreSQL: parses the URL (`tlsmode`/`sslmode` honoured).
    package static func open(
        _ location: DatabaseLocation,
        maxConnectionsPerEventLoop: Int = 4,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        checkpointsInBackground: Bool = true,
        logger: Logger
    ) async throws(DatabaseOpenError) -> Database {
        let pool: any SQLConnectionPool
        var writeGate: WriteGate?
        var checkpointer: SQLiteCheckpointer?
        switch location {
        case .sqlite(let path):
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw DatabaseOpenError(location: location, reason: "cannot create directory \(directory.path): \(error)")
            }
            let setup = SQLiteConnectionSetup(path: path, busyTimeoutMilliseconds: 5_000)
            pool = SQLiteConnectionPool(
                setup: setup,
                capacity: maxConnectionsPerEventLoop * Array(eventLoopGroup.makeIterator()).count,
                eventLoopGroup: eventLoopGroup,
                logger: logger
            )
            let gate = WriteGate()
            writeGate = gate
            checkpointer = SQLiteCheckpointer(setup: setup, gate: gate, eventLoop: eventLoopGroup.any(), logger: logger)
        case .postgres(let url):
            let configuration: SQLPostgresConfiguration
            do {
                configuration = try SQLPostgresConfiguration(url: url)
            } catch {
                throw DatabaseOpenError(location: location, reason: "not a valid PostgreSQL URL (\(error))")
            }
            pool = PooledSQLConnections(
                pool: EventLoopGroupConnectionPool(
                    source: PostgresConnectionSource(sqlConfiguration: configuration),
                    maxConnectionsPerEventLoop: maxConnectionsPerEventLoop,
                    pruneInterval: .seconds(60),
                    logger: logger,
                    on: eventLoopGroup
                ),
                logger: logger,
                makeSQL: { PostgresDirectSQL($0) },
                loops: Array(eventLoopGroup.makeIterator())
            )
        }
        let database = Database(location: location, pool: pool, writeGate: writeGate, checkpointer: checkpointer, logger: logger)
        do {
            if case .sqlite = location {
                try await database.enableWriteAheadLog()
            } else {
                try await database.ping()
            }
        } catch {
            await checkpointer?.stop()
            try? await pool.shutdown()
            throw DatabaseOpenError(location: location, reason: String(reflecting: error))
        }
        if checkpointsInBackground { checkpointer?.start() }
        return database
    }

    /// Runs `body` on one pooled connection, in the caller's task; inside a SQLite write transaction's body, on the
    /// transaction's connection (``OpenWriteTransaction``).
    package func withConnection<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        if let open = OpenWriteTransaction.current(of: self) { return try await body(open.connection) }
        readers.add(1, ordering: .relaxed)
        defer { readers.subtract(1, ordering: .relaxed) }
        return try await pool.withConnection(body)
    }

    /// How busy the pool is now: callers holding or waiting for a connection outside a transaction, transactions in
    /// progress or queued, and (SQLite) writers queued behind the one writing.
    package var poolUse: (readers: Int, transactions: Int, writersWaiting: Int) {
        (readers.load(ordering: .relaxed), transactions.load(ordering: .relaxed), writersWaiting)
    }

    /// Runs `body` in one transaction on one connection: committed when `body` returns, rolled back when it throws.
    /// On SQLite the transaction may share its commit with others queued at the same moment (``GroupCommit``): it is
    /// then a savepoint of theirs, rolled back alone if `body` throws, and this returns once the shared commit is made.
    ///
    /// Every change goes through here (on SQLite, writes outside a transaction can starve the lock holder). On SQLite
    /// write transactions queue in-process and start `IMMEDIATE`, taking the write lock up front instead of failing on
    /// lock upgrade, and run on the pool's one write connection (see ``SQLiteConnectionPool``). Transactions do not nest: `body` must use the database it is given and not call `transaction`.
    package func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        countTransaction(1)
        defer { countTransaction(-1) }
        guard let writeGate, let sqlite else { return try await runTransaction(body) }
        return try await groupedTransaction(gate: writeGate, pool: sqlite.pool, groups: sqlite.groups, body)
    }

    /// Rolls back the transaction open on `connection` (PostgreSQL), logging a rollback that fails.
    func rollBack(on connection: any SQLDatabase) async {
        do {
            try await connection.raw("ROLLBACK").run()
        } catch {
            logger.warning("rollback failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// Counts a transaction begun (1) or ended (-1) (``poolUse``).
    func countTransaction(_ change: Int) {
        transactions.add(change, ordering: .relaxed)
    }

    /// Runs `body` on the connection a PostgreSQL transaction runs on.
    func withWriteConnection<Result: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> Result) async throws -> Result {
        try await pool.withWriteConnection(body)
    }

    /// The hooks of a new transaction (or commit group) on this database.
    func newTransactionHooks() -> TransactionHooks {
        TransactionHooks(engine: engine, generations: generations, eventHub: eventHub, pushWake: pushWake)
    }

    /// ``transaction(_:)`` on PostgreSQL.
    private func runTransaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        let hooks = newTransactionHooks()
        let result = try await pool.withWriteConnection { connection in
            try await connection.raw("BEGIN").run()
            do {
                let result = try await TransactionHooks.$current.withValue(hooks) {
                    let result = try await body(connection)
                    // Hooks run inside the transaction's scope too: what they write may ask for after-commit work.
                    try await hooks.run(on: connection)
                    return result
                }
                try await connection.raw("COMMIT").run()
                return result
            } catch {
                await self.rollBack(on: connection)
                throw error
            }
        }
        hooks.runAfterCommit()
        return result
    }

    /// One checkpoint pass now (SQLite; `nil` on PostgreSQL), as the background ones run: for tests.
    func checkpointPass(holdingWrites: Bool = false) async throws -> SQLiteCheckpointer.Pass? {
        try await checkpointer?.pass(holdingWrites: holdingWrites)
    }

    /// Answers whether the database takes a trivial query; `/readyz` calls it.
    package func ping() async throws {
        try await withConnection { try await $0.raw("SELECT 1").run() }
    }

    /// Closes every pooled connection. Called once, after the HTTP server has drained.
    package func shutdown() async throws {
        isShutDown.withLock { $0 = true }
        await checkpointer?.stop()
        try await pool.shutdown()
    }

    /// A handle dropped without ``shutdown()`` (a start-up or a test that failed half-way) still closes its pool, in
    /// the background, instead of leaking its connections (and, on PostgreSQL, tripping AsyncKit's debug assertion).
    deinit {
        guard !isShutDown.withLock({ $0 }) else { return }
        let pool = self.pool
        let logger = self.logger
        let checkpointer = self.checkpointer
        Task {
            logger.debug("closing the pool of a database handle dropped without shutdown()")
            await checkpointer?.stop()
            try? await pool.shutdown()
        }
    }

    private func enableWriteAheadLog() async throws {
        let mode = try await withConnection { connection in
            try await connection.raw("PRAGMA journal_mode = WAL").first()?.decode(column: "journal_mode", as: String.self)
        }
        if mode?.lowercased() != "wal" {
            logger.warning("SQLite did not switch to WAL; concurrent readers will block writers", metadata: ["journal_mode": "\(mode ?? "unknown")"])
        }
    }
}

/// Start-up failure to open the database; the message names the setting that chose it.
package struct DatabaseOpenError: Error, CustomStringConvertible {
    package let location: DatabaseLocation
    package let reason: String

    package var description: String {
        "cannot open database \(location) (set by --database-url / FITBASE_DATABASE_URL): \(reason)"
    }
}

/// A pool of connections of one engine, seen as SQLKit databases.
protocol SQLConnectionPool: Sendable {
    func withConnection<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result
    /// The connection a transaction runs on (called by ``Database/transaction(_:)`` only).
    func withWriteConnection<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result
    func shutdown() async throws
}

/// PostgreSQL's pool: AsyncKit's, one per event loop.
///
/// `body` runs in the caller's task (its task-locals, such as ``RequestScope``, seen by code on the connection), on
/// its connection's event loop (``EventLoopTaskExecutor``): each statement is written and its answer read without
/// leaving that thread, where a task on Swift's global executor would cross threads twice per statement. The
/// connection is leased from the pool of the caller's own loop when it runs on one (a body that opens another).
private struct PooledSQLConnections<Source: ConnectionPoolSource>: SQLConnectionPool where Source.Connection: Sendable {
    let pool: EventLoopGroupConnectionPool<Source>
    let logger: Logger
    let makeSQL: @Sendable (Source.Connection) -> any SQLDatabase
    /// The pool's loops, each with the executor that runs a task's jobs on it.
    let loops: [(loop: any EventLoop, executor: EventLoopTaskExecutor)]

    init(pool: EventLoopGroupConnectionPool<Source>, logger: Logger, makeSQL: @escaping @Sendable (Source.Connection) -> any SQLDatabase, loops: [any EventLoop]) {
        self.pool = pool
        self.logger = logger
        self.makeSQL = makeSQL
        self.loops = loops.map { ($0, EventLoopTaskExecutor($0)) }
    }

    func withConnection<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        let connection = try await pool.requestConnection(logger: logger, on: ownLoop()).get()
        defer { pool.releaseConnection(connection, logger: logger) }
        let loop = connection.eventLoop
        guard let executor = loops.first(where: { $0.loop === loop })?.executor else { return try await body(makeSQL(connection)) }
        return try await withTaskExecutorPreference(executor) { try await body(makeSQL(connection)) }
    }

    /// The event loop the caller runs on when it is one of the pool's.
    private func ownLoop() -> (any EventLoop)? {
        guard let current = MultiThreadedEventLoopGroup.currentEventLoop else { return nil }
        return loops.first { $0.loop === current }?.loop
    }

    func withWriteConnection<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        try await withConnection(body)
    }

    func shutdown() async throws {
        try await pool.shutdownAsync()
    }
}

extension Database {
    /// Whether the table exists.
    func tableExists(_ name: String) async throws -> Bool {
        let engine = self.engine
        return try await withConnection { db in try await Self.tableExists(name, on: db, engine: engine) }
    }

    static func tableExists(_ name: String, on db: any SQLDatabase, engine: DatabaseEngine) async throws -> Bool {
        switch engine {
        case .sqlite:
            try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name = \(bind: name)").first() != nil
        case .postgres:
            // The catalog read in the statement's snapshot (`to_regclass` may answer from a cache that has not yet
            // seen another session's committed DROP).
            try await db.raw("SELECT 1 AS present FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = \(bind: name)").first() != nil
        }
    }
}

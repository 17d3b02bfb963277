import Logging
import NIOCore

/// Opens SQLite connections configured the way every FitBase store expects them.
///
/// Per connection: `foreign_keys=ON` (referential integrity), `busy_timeout` (a writer waits for another process's
/// writer instead of failing, and sleeps while it waits rather than spinning), `synchronous=NORMAL` (durable in WAL
/// mode), `temp_store=MEMORY` (statement journals and sorts stay in memory: a multi-row insert inside a transaction
/// wrote its statement journal to a temporary file). WAL itself is a property of the database file and is switched on
/// once when the database opens.
struct SQLiteConnectionSetup: Sendable {
    let path: String
    let busyTimeoutMilliseconds: Int

    /// The write connection's page cache: 64 MiB, filled only as far as the database is large. Inserts keyed by random
    /// ids (health samples) dirty a page per row; with SQLite's default of 2 MiB, uploads to a year of samples spent a
    /// fifth of their time reading pages again.
    static let writerCacheKiB = 65_536

    /// The log length (pages) at which a commit checkpoints itself. ``SQLiteCheckpointer`` copies the log in the
    /// background long before; this only bounds the log should it fall far behind. (Checkpoints run by commits held
    /// up the writes queued behind them: with SQLite's default of 1,000 pages, two `fsync`s per health upload; at
    /// 16,384, a signed-in workout log's p99 went from 37 to 214 ms.)
    static let writerBackstopPages = 65_536

    /// A connection for reading.
    func open(logger: Logger, eventLoop: any EventLoop) throws(SQLiteReportedError) -> SQLiteDirectConnection {
        try open(logger: logger, eventLoop: eventLoop, extra: [])
    }

    /// The connection that runs the write transactions.
    func openWriter(logger: Logger, eventLoop: any EventLoop) throws(SQLiteReportedError) -> SQLiteDirectConnection {
        try open(
            logger: logger, eventLoop: eventLoop,
            extra: [
                "PRAGMA cache_size = -\(Self.writerCacheKiB)", "PRAGMA wal_autocheckpoint = \(Self.writerBackstopPages)",
                // A log that grew past where the checkpointer starts it again (a backstop run) shrinks back to that.
                "PRAGMA journal_size_limit = \(SQLiteCheckpointer.restartPages * 4_096)",
                // Deleted and replaced content is overwritten with zeros, not left in free space: what an account
                // deletion or the sealing of clear rows removes is gone from the file, not only unreachable.
                "PRAGMA secure_delete = ON",
            ]
        )
    }

    private func open(logger: Logger, eventLoop: any EventLoop, extra: [String]) throws(SQLiteReportedError) -> SQLiteDirectConnection {
        let connection = try SQLiteDirectConnection(path: path, logger: logger, eventLoop: eventLoop)
        do {
            for pragma in ["PRAGMA busy_timeout = \(busyTimeoutMilliseconds)", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL", "PRAGMA temp_store = MEMORY"] + extra {
                try connection.run(pragma, []) { _, _ in }
            }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }
}

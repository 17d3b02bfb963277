import Logging
import NIOCore

/// Opens SQLite connections configured the way every FitBase store expects them.
///
/// Per connection: `foreign_keys=ON` (referential integrity), `busy_timeout` (a writer waits for another process's
/// writer instead of failing, and sleeps while it waits rather than spinning), `synchronous=NORMAL` (durable in WAL
/// mode). WAL itself is a property of the database file and is switched on once when the database opens.
struct SQLiteConnectionSetup: Sendable {
    let path: String
    let busyTimeoutMilliseconds: Int

    func open(logger: Logger, eventLoop: any EventLoop) throws(SQLiteReportedError) -> SQLiteDirectConnection {
        let connection = try SQLiteDirectConnection(path: path, logger: logger, eventLoop: eventLoop)
        do {
            for pragma in ["PRAGMA busy_timeout = \(busyTimeoutMilliseconds)", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL"] {
                try connection.run(pragma, []) { _, _ in }
            }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }
}

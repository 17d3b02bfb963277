import AsyncKit
import Logging
import NIOCore
import NIOPosix
import SQLiteKit
import SQLiteNIO

/// Opens SQLite connections configured the way every FitBase store expects them.
///
/// Per connection: `foreign_keys=ON` (referential integrity), `busy_timeout` (a writer waits for another writer
/// instead of failing, and sleeps while it waits rather than spinning), `synchronous=NORMAL` (durable in WAL mode).
/// WAL itself is a property of the database file and is switched on once when the database opens.
struct SQLiteConnectionSetup: ConnectionPoolSource {
    let path: String
    let busyTimeoutMilliseconds: Int
    let threadPool: NIOThreadPool

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<SQLiteConnection> {
        SQLiteConnection.open(storage: .file(path: path), threadPool: threadPool, logger: logger, on: eventLoop)
            .flatMap { connection in
                connection.query("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
                    .flatMap { _ in connection.query("PRAGMA foreign_keys = ON") }
                    .flatMap { _ in connection.query("PRAGMA synchronous = NORMAL") }
                    .map { _ in connection }
                    .flatMapError { error in connection.close().flatMapThrowing { throw error } }
            }
    }
}

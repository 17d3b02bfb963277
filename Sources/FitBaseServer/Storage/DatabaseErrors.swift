import FitBaseCore
import HTTPTypes
import AsyncKit
import PostgresNIO
import VaporCSQLite

extension Database {
    /// Whether `error` is a unique-constraint violation, on either engine. Stores use it to turn a lost race on a
    /// unique key into a 409 instead of a 500.
    package static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? PSQLError {
            return error.serverInfo?[.sqlState] == "23505"
        }
        if let error = error as? SQLiteReportedError {
            return error.code == sqliteConstraintUnique || error.code == sqliteConstraintPrimaryKey
                || (error.code == SQLITE_CONSTRAINT && error.message.contains("UNIQUE"))
        }
        return false
    }
}

/// SQLite's extended result codes `SQLITE_CONSTRAINT_UNIQUE` and `SQLITE_CONSTRAINT_PRIMARYKEY` (macros Swift does not
/// import).
private let sqliteConstraintUnique = SQLITE_CONSTRAINT | (8 << 8)
private let sqliteConstraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)

/// Every pooled PostgreSQL connection stayed lent for the pool's whole wait (10 seconds): the database is overloaded,
/// not broken, so the caller gets 503 `busy` with `Retry-After` instead of a 500.
extension ConnectionPoolTimeoutError: ProblemConvertible {
    var problem: Problem {
        Problem(
            .serviceUnavailable, code: .busy, detail: "The database is busy; try again in a second.", headers: [.retryAfter: "1"]
        )
    }
}

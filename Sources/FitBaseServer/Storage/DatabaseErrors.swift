import PostgresNIO
import SQLiteNIO

extension Database {
    /// Whether `error` is a unique-constraint violation, on either engine. Stores use it to turn a lost race on a
    /// unique key into a 409 instead of a 500.
    package static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? PSQLError {
            return error.serverInfo?[.sqlState] == "23505"
        }
        if let error = error as? SQLiteError {
            return error.reason == .constraintUniqueFailed || error.reason == .constraintPrimaryKeyFailed
                || (error.reason == .constraint && error.message.contains("UNIQUE"))
        }
        return false
    }
}

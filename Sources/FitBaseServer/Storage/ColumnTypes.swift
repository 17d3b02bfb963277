import Foundation
import SQLKit

/// Column types that differ between the engines, so a migration can be written once.
///
/// Conventions every store follows: identifiers are `uuid` on PostgreSQL and `TEXT` on SQLite (bind Swift `UUID`);
/// instants are `timestamptz` / `REAL` seconds since 1970 (bind Swift `Date`, UTC, microsecond precision);
/// calendar dates are `TEXT` `YYYY-MM-DD` on both; booleans are `boolean` / `INTEGER`; JSON documents are `TEXT`.
extension DatabaseEngine {
    /// A UUID identifier column.
    package var uuid: SQLDataType { self == .postgres ? .custom(SQLRaw("uuid")) : .text }
    /// An instant in time (UTC).
    package var instant: SQLDataType { self == .postgres ? .custom(SQLRaw("timestamptz")) : .real }
    /// A boolean.
    package var boolean: SQLDataType { self == .postgres ? .custom(SQLRaw("boolean")) : .int }
    /// Raw bytes (ciphertexts): `bytea` / `BLOB`.
    package var bytes: SQLDataType { self == .postgres ? .custom(SQLRaw("bytea")) : .blob }
}

extension Date {
    /// The system's clock at the precision both engines store (``ServerClock/system``'s `now`): for migrations and
    /// tests. The application reads the time from its ``ServerClock``.
    package static var storageNow: Date {
        ServerClock.system.now
    }
}

/// The columns many tables share, written once. Shipped migrations call these, so they never change: a table that
/// needs another definition says it in a migration of its own.
extension SQLCreateTableBuilder {
    /// `user_id`: the user the row belongs to; it goes with the account.
    func ownerColumn(_ engine: DatabaseEngine) -> Self {
        column("user_id", type: engine.uuid, .notNull, .references("users", "id", onDelete: .cascade))
    }

    /// `created_at` and `updated_at`, both required.
    func timestampColumns(_ engine: DatabaseEngine) -> Self {
        column("created_at", type: engine.instant, .notNull).column("updated_at", type: engine.instant, .notNull)
    }
}

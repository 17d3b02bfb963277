import Foundation
import Logging
import SQLKit

/// One schema change. Each migration is its own type, applied once, in order, inside a transaction.
///
/// `name` is what the database records: never rename or reorder a migration that has shipped; add a new one.
package protocol Migration: Sendable {
    /// Stable identifier recorded in `fitbase_migrations`.
    var name: String { get }
    /// Applies the change. Runs inside the runner's transaction; branch on `engine` only for DDL differences.
    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws
}

/// Applies pending migrations and records them in `fitbase_migrations`.
///
/// Safe to run twice and safe to run from several instances at once: on PostgreSQL each step holds a transaction-level
/// advisory lock, on SQLite `BEGIN IMMEDIATE` serialises writers; an already-recorded migration is skipped.
package struct MigrationRunner: Sendable {
    package let database: Database
    package let migrations: [any Migration]
    package let logger: Logger

    package init(database: Database, migrations: [any Migration], logger: Logger) {
        self.database = database
        self.migrations = migrations
        self.logger = logger
    }

    /// Applies what is pending and returns the names applied by this call (empty when up to date).
    @discardableResult
    package func run() async throws -> [String] {
        var seen = Set<String>()
        for migration in migrations where !seen.insert(migration.name).inserted {
            throw MigrationError.duplicateName(migration.name)
        }
        let engine = database.engine
        try await database.transaction { db in
            try await Self.lock(db, engine: engine)
            try await db.create(table: Self.table)
                .ifNotExists()
                .column("name", type: .text, .primaryKey(autoIncrement: false))
                .column("applied_at", type: .text, .notNull)
                .run()
        }
        let known = Set(migrations.map(\.name))
        let recorded = try await appliedNames()
        let unknown = recorded.subtracting(known)
        if !unknown.isEmpty {
            logger.warning(
                "database has migrations this build does not know; is an older binary running against a newer schema?",
                metadata: ["migrations": "\(unknown.sorted())"]
            )
        }

        var applied: [String] = []
        for migration in migrations where !recorded.contains(migration.name) {
            let didApply = try await database.transaction { db in
                try await Self.lock(db, engine: engine)
                let already = try await db.select().column("name").from(Self.table)
                    .where("name", .equal, migration.name).first()
                guard already == nil else { return false }
                try await migration.prepare(on: db, engine: engine)
                // The wall clock, not the application's ServerClock: migrations also run from the command line, before
                // any application exists, and `applied_at` is only read by people.
                try await db.insert(into: Self.table)
                    .columns("name", "applied_at")
                    .values(SQLBind(migration.name), SQLBind(Date.now.formatted(.iso8601)))
                    .run()
                return true
            }
            if didApply {
                logger.info("applied migration", metadata: ["migration": "\(migration.name)"])
                applied.append(migration.name)
            }
        }
        return applied
    }

    /// Names recorded as applied, in no particular order.
    package func appliedNames() async throws -> Set<String> {
        let rows = try await database.withConnection { db in
            try await db.select().column("name").from(Self.table).all()
        }
        return Set(try rows.map { try $0.decode(column: "name", as: String.self) })
    }

    static let table = "fitbase_migrations"

    /// A constant key so concurrent `migrate` runs on one PostgreSQL database take turns.
    private static let advisoryLockKey: Int64 = 0x6669_7462_6173_65  // "fitbase"

    /// Takes the migrations' advisory lock for the rest of the transaction on `db` (PostgreSQL; SQLite's writers are
    /// serialised already). Tables created outside migrations (at start-up, before them) take it too.
    static func lock(_ db: any SQLDatabase, engine: DatabaseEngine) async throws {
        guard engine == .postgres else { return }
        try await db.raw("SELECT pg_advisory_xact_lock(\(bind: advisoryLockKey))").run()
    }
}

/// A programming error in the migration list.
package enum MigrationError: Error, CustomStringConvertible {
    case duplicateName(String)

    package var description: String {
        switch self {
        case .duplicateName(let name): "two migrations share the name \(name)"
        }
    }
}

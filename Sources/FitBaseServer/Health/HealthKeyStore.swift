import FitBaseCore
import Foundation
import SQLKit

/// Where users' health data keys live, wrapped by the master key: `health_data_keys` in a database kept apart from
/// the samples (by default `<data dir>/keystore.sqlite` beside a SQLite database; `FITBASE_KEYSTORE_URL` names
/// another, which PostgreSQL deployments should set to a database backed up separately). A copy of the main database
/// therefore holds ciphertext only, and deleting a key makes every copy of that user's samples unreadable.
struct HealthKeyStore: Sendable {
    let database: Database
    /// When keys are made (their `created_at`).
    let clock: ServerClock

    /// A user's data key as stored: its id (written beside every ciphertext it sealed), the id of the master key that
    /// wraps it, and the wrapped bytes.
    struct WrappedKey: Sendable, Equatable {
        var user: UserID
        var keyID: String
        var masterKeyID: String
        var wrapped: Data
    }

    /// Creates the table if needed (the key store has no other schema, so it needs no migration history).
    func prepare() async throws {
        let engine = database.engine
        try await database.transaction { db in
            // Instances starting at once would collide in CREATE TABLE IF NOT EXISTS on PostgreSQL.
            try await MigrationRunner.lock(db, engine: engine)
            try await db.create(table: "health_data_keys").ifNotExists()
                .column("user_id", type: engine.uuid, .primaryKey(autoIncrement: false))
                .column("key_id", type: .text, .notNull)
                .column("master_key_id", type: .text, .notNull)
                .column("wrapped", type: engine.bytes, .notNull)
                .column("created_at", type: engine.instant, .notNull)
                .run()
            try await db.create(table: "audit_keys").ifNotExists()
                .column("key_id", type: .text, .primaryKey(autoIncrement: false))
                .column("master_key_id", type: .text, .notNull)
                .column("wrapped", type: engine.bytes, .notNull)
                .column("created_at", type: engine.instant, .notNull)
                .run()
        }
    }

    /// The audit key as stored (see ``AuditKey``).
    struct WrappedAuditKey: Sendable, Equatable {
        var id: String
        var masterKeyID: String
        var wrapped: Data
    }

    func auditKeys() async throws -> [WrappedAuditKey] {
        try await database.withConnection { db in
            try await db.select().columns("key_id", "master_key_id", "wrapped").from("audit_keys").all().map(Self.auditKey)
        }
    }

    /// Stores an audit key unless one with its id is there (instances starting together).
    func insertAuditKeyIfAbsent(id: String, masterKeyID: String, wrapped: Data) async throws {
        try await database.transaction { db in
            try await db.insert(into: "audit_keys").columns("key_id", "master_key_id", "wrapped", "created_at")
                .values(SQLBind(id), SQLBind(masterKeyID), SQLBind(wrapped), SQLBind(clock.now))
                .ignoringConflicts(with: ["key_id"])
                .run()
        }
    }

    /// Re-wraps every audit key with `rewrap` in one transaction (master key rotation); returns how many.
    func rewrapAuditKeys(_ rewrap: @escaping @Sendable (WrappedAuditKey) throws -> WrappedAuditKey) async throws -> Int {
        try await database.transaction { db in
            let keys = try await db.select().columns("key_id", "master_key_id", "wrapped").from("audit_keys").all().map(Self.auditKey)
            for key in keys {
                let fresh = try rewrap(key)
                try await db.update("audit_keys").set("master_key_id", to: fresh.masterKeyID).set("wrapped", to: fresh.wrapped)
                    .where("key_id", .equal, key.id).run()
            }
            return keys.count
        }
    }

    func key(of user: UserID) async throws -> WrappedKey? {
        try await database.withConnection { db in
            try await db.select().columns(Self.columns).from("health_data_keys").where("user_id", .equal, user.rawValue).first().map(Self.key)
        }
    }

    /// Stores `key` unless the user has one already (a concurrent first upload); returns the one that is stored.
    func insertIfAbsent(_ key: WrappedKey) async throws -> WrappedKey {
        try await database.transaction { db in
            try await db.insert(into: "health_data_keys").columns(Self.columns + ["created_at"])
                .values(SQLBind(key.user.rawValue), SQLBind(key.keyID), SQLBind(key.masterKeyID), SQLBind(key.wrapped), SQLBind(clock.now))
                .ignoringConflicts(with: ["user_id"])
                .run()
            guard let stored = try await db.select().columns(Self.columns).from("health_data_keys")
                .where("user_id", .equal, key.user.rawValue).first().map(Self.key)
            else { throw HealthKeyStoreError.vanished }
            return stored
        }
    }

    /// Destroys the user's key (crypto-shredding); whether there was one.
    @discardableResult
    func destroy(_ user: UserID) async throws -> Bool {
        try await database.transaction { db in
            !(try await db.delete(from: "health_data_keys").where("user_id", .equal, user.rawValue).returning("user_id").all()).isEmpty
        }
    }

    /// The master key ids keys are wrapped under, with how many keys each.
    func masterKeyIDs() async throws -> [String: Int] {
        try await database.withConnection { db in
            var counts: [String: Int] = [:]
            for row in try await db.select().column("master_key_id").from("health_data_keys").all() {
                counts[try row.decode(column: "master_key_id", as: String.self), default: 0] += 1
            }
            return counts
        }
    }

    /// Re-wraps every key with `rewrap` in one transaction (master key rotation); returns how many.
    func rewrapAll(_ rewrap: @escaping @Sendable (WrappedKey) throws -> WrappedKey) async throws -> Int {
        try await database.transaction { db in
            let keys = try await db.select().columns(Self.columns).from("health_data_keys").all().map(Self.key)
            for key in keys {
                let fresh = try rewrap(key)
                try await db.update("health_data_keys").set("master_key_id", to: fresh.masterKeyID).set("wrapped", to: fresh.wrapped)
                    .where("user_id", .equal, key.user.rawValue).run()
            }
            return keys.count
        }
    }

    private static let columns = ["user_id", "key_id", "master_key_id", "wrapped"]

    private static func auditKey(_ row: any SQLRow) throws -> WrappedAuditKey {
        WrappedAuditKey(
            id: try row.decode(column: "key_id", as: String.self), masterKeyID: try row.decode(column: "master_key_id", as: String.self),
            wrapped: try row.decode(column: "wrapped", as: Data.self)
        )
    }

    private static func key(_ row: any SQLRow) throws -> WrappedKey {
        WrappedKey(
            user: UserID(rawValue: try row.decode(column: "user_id", as: UUID.self)), keyID: try row.decode(column: "key_id", as: String.self),
            masterKeyID: try row.decode(column: "master_key_id", as: String.self), wrapped: try row.decode(column: "wrapped", as: Data.self)
        )
    }
}

enum HealthKeyStoreError: Error {
    /// A key inserted (or found) a moment ago is gone: the account was deleted meanwhile.
    case vanished
}

import Foundation
import SQLKit

/// The database's record of the master key its secrets are sealed under, so that every instance sharing the database
/// is made to hold that same key: one started with another (or an auto-generated one) stops at start-up, instead of
/// signing with keys others cannot open or failing on the first sealed row it reads.
///
/// The record is one row of `deployment_keys`: the key's fingerprint (``MasterKey/id``, named in messages) and a
/// constant sealed under the key. Only the sealed constant decides: the fingerprint is printed in logs and stored
/// beside every wrapped key, while the check value can be opened — and so matched — only with the key itself.
/// The first start records the configured key; `fitbase keys rotate` replaces the record in the transaction that
/// re-seals the database's secrets.
struct MasterKeyCheck: Sendable {
    let database: Database

    static let table = "deployment_keys"
    private static let row = "master"
    private static let constant = Data("fitbase master key check".utf8)
    private static let context = "deployment_keys/master"

    /// Creates the table if needed. It is not a migration: the check runs in `buildApplication`, before migrations
    /// (which run as the server starts), so a wrong key stops start-up with one line naming the setting.
    func prepare() async throws {
        let engine = database.engine
        try await database.transaction { db in
            // Concurrent CREATE TABLE IF NOT EXISTS can collide on PostgreSQL; take the migrations' lock.
            try await MigrationRunner.lock(db, engine: engine)
            try await db.create(table: Self.table).ifNotExists()
                .column("name", type: .text, .primaryKey(autoIncrement: false))
                .column("key_id", type: .text, .notNull)
                .column("check_value", type: engine.bytes, .notNull)
                .column("updated_at", type: engine.instant, .notNull)
                .run()
        }
    }

    /// Records `masterKey` when the database has no record yet (first start; of several instances starting at once,
    /// the first insert wins), then refuses it unless it is the recorded key.
    func verify(_ masterKey: MasterKey, now: Date) async throws {
        let sealed = try masterKey.seal(Self.constant, context: Self.context)
        let recorded = try await database.transaction { db in
            try await db.insert(into: Self.table).columns("name", "key_id", "check_value", "updated_at")
                .values(SQLBind(Self.row), SQLBind(masterKey.id), SQLBind(sealed), SQLBind(now))
                .ignoringConflicts(with: ["name"])
                .run()
            return try await Self.recorded(on: db)
        }
        guard let recorded else { throw MasterKeyCheckError.vanished }
        try Self.check(masterKey, against: recorded)
    }

    /// Makes `masterKey` the recorded one (master key rotation), on `db` inside the rotation's transaction.
    static func record(_ masterKey: MasterKey, now: Date, on db: any SQLDatabase) async throws {
        let sealed = try masterKey.seal(constant, context: context)
        try await db.insert(into: table).columns("name", "key_id", "check_value", "updated_at")
            .values(SQLBind(row), SQLBind(masterKey.id), SQLBind(sealed), SQLBind(now))
            .onConflict(with: ["name"]) { $0.set(excludedValueOf: "key_id").set(excludedValueOf: "check_value").set(excludedValueOf: "updated_at") }
            .run()
    }

    private static func recorded(on db: any SQLDatabase) async throws -> (keyID: String, checkValue: Data)? {
        guard let row = try await db.select().columns("key_id", "check_value").from(table).where("name", .equal, self.row).first() else {
            return nil
        }
        return (try row.decode(column: "key_id", as: String.self), try row.decode(column: "check_value", as: Data.self))
    }

    private static func check(_ masterKey: MasterKey, against recorded: (keyID: String, checkValue: Data)) throws {
        guard (try? masterKey.open(recorded.checkValue, context: context)) == constant else {
            throw MasterKeyCheckError.otherKey(configured: masterKey.id, recorded: recorded.keyID)
        }
    }
}

enum MasterKeyCheckError: Error, CustomStringConvertible {
    case otherKey(configured: String, recorded: String)
    /// The record inserted (or found) a moment ago is gone: someone emptied the table meanwhile.
    case vanished

    var description: String {
        switch self {
        case .otherKey(let configured, let recorded):
            "the master key (FITBASE_MASTER_KEY or FITBASE_MASTER_KEY_FILE, id \(configured)) is not the one this database's secrets are "
                + "sealed under (id \(recorded)); start every instance with that key (after `fitbase keys rotate`, with the new one)"
        case .vanished: "the master key record in \(MasterKeyCheck.table) vanished while it was being checked"
        }
    }
}

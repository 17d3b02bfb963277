import Foundation
import SQLKit

/// What a signing key is for.
enum SigningKeyState: String, Sendable {
    /// Signs new access tokens (exactly one key), verifies and is published.
    case current
    /// Was current: still verifies and is published, until tokens it signed have expired.
    case previous
    /// Verifies nothing any more; the row stays as a record.
    case retired
}

/// The SQL of `signing_keys`. Private keys are stored sealed by the master key (see ``SigningKeys``).
struct SigningKeyStore: Sendable {
    let database: Database

    /// A key as stored.
    struct StoredKey: Sendable, Equatable {
        var kid: String
        var state: SigningKeyState
        /// PEM (SubjectPublicKeyInfo).
        var publicKey: String
        var sealedPrivateKey: Data
        var createdAt: Date
        /// When it stopped being current.
        var demotedAt: Date?
    }

    /// The keys that verify (current, then previous ones newest first).
    func liveKeys() async throws -> [StoredKey] {
        let keys = try await database.withConnection { db in
            try await db.select().columns(Self.columns).from("signing_keys")
                .where("state", .notEqual, SigningKeyState.retired.rawValue)
                .orderBy("created_at", .descending)
                .all().map(Self.key)
        }
        return keys.filter { $0.state == .current } + keys.filter { $0.state != .current }
    }

    /// Every key, retired ones included.
    static func allKeys(on db: any SQLDatabase) async throws -> [StoredKey] {
        try await db.select().columns(columns).from("signing_keys").orderBy("created_at").all().map(key)
    }

    /// Stores `key` unless a key with its kid exists or, for a current key, another key is current (of several
    /// instances starting at once, one insert wins). Returns whether it was stored.
    @discardableResult
    func insertIfAbsent(_ key: StoredKey) async throws -> Bool {
        try await database.transaction { db in
            !(try await db.insert(into: "signing_keys").columns(Self.columns)
                .values(Self.values(key))
                .ignoringConflicts()
                .returning("kid")
                .all()).isEmpty
        }
    }

    /// In one transaction, serialized across instances: retires the previous keys demoted at or before
    /// `retiringDemotedBefore`, demotes the current key to previous, and stores `key` as the current one.
    func rotate(to key: StoredKey, retiringDemotedBefore cutoff: Date, now: Date) async throws -> (demoted: [String], retired: [String]) {
        try await database.transaction { db in
            if db.dialect.name == "postgresql" { try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.lockKey))").run() }
            let retired = try await db.update("signing_keys").set("state", to: SigningKeyState.retired.rawValue)
                .where("state", .equal, SigningKeyState.previous.rawValue).where("demoted_at", .lessThanOrEqual, cutoff)
                .returning("kid").all().map { try $0.decode(column: "kid", as: String.self) }
            let demoted = try await db.update("signing_keys").set("state", to: SigningKeyState.previous.rawValue).set("demoted_at", to: now)
                .where("state", .equal, SigningKeyState.current.rawValue)
                .returning("kid").all().map { try $0.decode(column: "kid", as: String.self) }
            var current = key
            current.state = .current
            try await db.insert(into: "signing_keys").columns(Self.columns).values(Self.values(current)).run()
            return (demoted, retired)
        }
    }

    /// Replaces every key's sealed private key with `reseal`'s, on `db` (master key rotation); returns how many.
    static func resealAll(on db: any SQLDatabase, _ reseal: (StoredKey) throws -> Data) async throws -> Int {
        let keys = try await db.select().columns(columns).from("signing_keys").all().map(key)
        for key in keys {
            try await db.update("signing_keys").set("sealed_private_key", to: try reseal(key)).where("kid", .equal, key.kid).run()
        }
        return keys.count
    }

    /// Serializes rotations across instances on PostgreSQL ("fitbase signing keys").
    private static let lockKey: Int64 = 0x6662_5f73_6967_6e  // "fb_sign"

    private static let columns = ["kid", "state", "public_key", "sealed_private_key", "created_at", "demoted_at"]

    private static func values(_ key: StoredKey) -> [any SQLExpression] {
        [
            SQLBind(key.kid), SQLBind(key.state.rawValue), SQLBind(key.publicKey), SQLBind(key.sealedPrivateKey), SQLBind(key.createdAt),
            key.demotedAt.map { SQLBind($0) as any SQLExpression } ?? SQLLiteral.null,
        ]
    }

    private static func key(_ row: any SQLRow) throws -> StoredKey {
        let state = try row.decode(column: "state", as: String.self)
        guard let parsed = SigningKeyState(rawValue: state) else { throw SigningKeyStoreError.unknownState(state) }
        return StoredKey(
            kid: try row.decode(column: "kid", as: String.self), state: parsed, publicKey: try row.decode(column: "public_key", as: String.self),
            sealedPrivateKey: try row.decode(column: "sealed_private_key", as: Data.self), createdAt: try row.decode(column: "created_at", as: Date.self),
            demotedAt: try row.decode(column: "demoted_at", as: Date?.self)
        )
    }
}

enum SigningKeyStoreError: Error, CustomStringConvertible {
    case unknownState(String)

    var description: String {
        switch self {
        case .unknownState(let state): "a signing key has the unknown state \(state); is a newer binary sharing the database?"
        }
    }
}

import FitBaseCore
import Foundation
import SQLKit

/// A row of `sessions`.
struct SessionRecord: Sendable, Equatable {
    var id: SessionID
    var user: UserID
    var deviceLabel: String?
    var createdAt: Date
    var lastUsedAt: Date
}

/// How presenting a refresh token went.
enum RefreshOutcome: Sendable {
    /// Rotated: the old token is spent, `newToken` replaces it.
    case rotated(session: SessionID, user: UserID, authenticatedAt: Date, newToken: String)
    /// The token was already spent: someone replayed it, so its whole session was revoked.
    case reused
    /// Unknown, expired, or its session has ended.
    case invalid
}

/// SQL for `sessions` and `refresh_tokens`. Refresh tokens are 256-bit random strings stored only as SHA-256.
struct SessionStore: Sendable {
    /// A refresh token stays valid this long after its last use (sliding).
    static let refreshTokenLifetime: TimeInterval = 30 * 24 * 3600

    let database: Database
    /// Live sessions already verified by this instance.
    let cache = SessionCache()

    /// Starts a session for `user` on `db` (the caller's transaction) and returns it with its first refresh token.
    /// Every sign-in comes through here, so it also records the account's last sign-in.
    func start(user: UserID, deviceLabel: String?, now: Date, on db: any SQLDatabase) async throws -> (SessionID, String) {
        try await db.update("users").set("last_sign_in_at", to: now).where("id", .equal, user.rawValue).run()
        let session = SessionID()
        try await db.insert(into: "sessions")
            .columns("id", "user_id", "device_label", "created_at", "last_used_at")
            .values(SQLBind(session.rawValue), SQLBind(user.rawValue), SQLBind(deviceLabel), SQLBind(now), SQLBind(now))
            .run()
        let token = try await issueRefreshToken(session: session, user: user, now: now, on: db)
        return (session, token)
    }

    /// Spends `token` and issues its successor, in one transaction. Presenting a spent token revokes its session.
    func rotate(_ token: String, now: Date) async throws -> RefreshOutcome {
        let hash = Self.hash(token)
        return try await database.transaction { db in
            guard let row = try await db.select()
                .column(SQLColumn("session_id", table: "refresh_tokens"))
                .column(SQLColumn("user_id", table: "refresh_tokens"))
                .column(SQLColumn("expires_at", table: "refresh_tokens"))
                .column(SQLColumn("replaced_at", table: "refresh_tokens"))
                .column(SQLColumn("revoked_at", table: "sessions"))
                .column(SQLColumn("created_at", table: "sessions"))
                .from("refresh_tokens")
                .join("sessions", on: SQLColumn("id", table: "sessions"), .equal, SQLColumn("session_id", table: "refresh_tokens"))
                .where(SQLColumn("token_hash", table: "refresh_tokens"), .equal, SQLBind(hash))
                .first()
            else { return .invalid }
            let session = SessionID(rawValue: try row.decode(column: "session_id", as: UUID.self))
            let user = UserID(rawValue: try row.decode(column: "user_id", as: UUID.self))
            if try row.decode(column: "revoked_at", as: Date?.self) != nil { return .invalid }
            if try row.decode(column: "replaced_at", as: Date?.self) != nil {
                try await revoke(session, now: now, on: db)
                return .reused
            }
            guard try row.decode(column: "expires_at", as: Date.self) > now else { return .invalid }
            // Guarded on `replaced_at IS NULL` so two concurrent refreshes cannot both spend the same token.
            let spent = try await db.update("refresh_tokens").set("replaced_at", to: now)
                .where("token_hash", .equal, hash).where("replaced_at", .is, SQLLiteral.null)
                .returning("token_hash").all()
            guard !spent.isEmpty else {
                try await revoke(session, now: now, on: db)
                return .reused
            }
            try await db.update("sessions").set("last_used_at", to: now).where("id", .equal, session.rawValue).run()
            let next = try await issueRefreshToken(session: session, user: user, now: now, on: db)
            return .rotated(
                session: session, user: user, authenticatedAt: try row.decode(column: "created_at", as: Date.self), newToken: next
            )
        }
    }

    /// Ends `session` if it belongs to `user`; `false` when there is no such session of theirs.
    func revoke(_ session: SessionID, of user: UserID, now: Date) async throws -> Bool {
        try await database.transaction { db in try await Self.revoke(session, of: user, now: now, on: db) }
    }

    /// ``revoke(_:of:now:)`` in the caller's transaction (the console records who revoked it in the same one).
    static func revoke(_ session: SessionID, of user: UserID, now: Date, on db: any SQLDatabase) async throws -> Bool {
        let rows = try await db.update("sessions").set("revoked_at", to: now)
            .where("id", .equal, session.rawValue).where("user_id", .equal, user.rawValue)
            .where("revoked_at", .is, SQLLiteral.null)
            .returning("id").all()
        guard !rows.isEmpty else { return false }
        try await ended([session], now: now, on: db)
        return true
    }

    /// Ends every session of `user` (Apple `consent-revoked`).
    func revokeAll(of user: UserID, now: Date) async throws {
        try await database.transaction { db in try await Self.revokeAll(of: user, except: nil, now: now, on: db) }
    }

    /// Ends every session of `user` but `kept`, in the caller's transaction (a password reset, change or takeover).
    static func revokeAll(of user: UserID, except kept: SessionID?, now: Date, on db: any SQLDatabase) async throws {
        var update = db.update("sessions").set("revoked_at", to: now)
            .where("user_id", .equal, user.rawValue).where("revoked_at", .is, SQLLiteral.null)
        if let kept { update = update.where("id", .notEqual, kept.rawValue) }
        let ended = try await update.returning("id").all().map { SessionID(rawValue: try $0.decode(column: "id", as: UUID.self)) }
        try await Self.ended(ended, now: now, on: db)
    }

    /// What follows sessions' end, in the transaction that ends them: every instance forgets them (the `sessions`
    /// cache generation), closes their event streams (a `session_ended` event each), and the devices they registered
    /// stop receiving pushes (removed, with the pushes still queued for them).
    static func ended(_ sessions: [SessionID], now: Date, on db: any SQLDatabase) async throws {
        try await CacheGenerations.bump(.sessions, on: db)
        try await EventLog.sessionsEnded(sessions, now: now, on: db)
        try await DeviceStore.sessionsEnded(sessions, on: db)
    }

    /// The role of `user` if `session` is theirs and still live; `nil` otherwise. Called on every authenticated request:
    /// answered from ``SessionCache`` while the `sessions` generation has not moved, else from the database.
    func liveSessionRole(_ session: SessionID, user: UserID) async throws -> Role? {
        let generation = try await database.generations.current(.sessions, on: database)
        if let role = cache.role(of: session, user: user, at: generation) { return role }
        let role = try await database.withConnection { db in
            try await db.select().column(SQLColumn("role", table: "users"))
                .from("sessions")
                .join("users", on: SQLColumn("id", table: "users"), .equal, SQLColumn("user_id", table: "sessions"))
                .where(SQLColumn("id", table: "sessions"), .equal, SQLBind(session.rawValue))
                .where(SQLColumn("user_id", table: "sessions"), .equal, SQLBind(user.rawValue))
                .where(SQLColumn("revoked_at", table: "sessions"), .is, SQLLiteral.null)
                .first()
                .map { Role(rawValue: try $0.decode(column: "role", as: String.self)) ?? .user }
        }
        if let role { cache.keep(session, user: user, role: role, at: generation) }
        return role
    }

    /// Live sessions of `user`, newest first, after the `after` cursor position when given.
    func list(user: UserID, limit: Int, after cursor: (createdAt: Date, id: SessionID)?) async throws -> [SessionRecord] {
        try await database.withConnection { db in
            var query = db.select()
                .columns("id", "user_id", "device_label", "created_at", "last_used_at")
                .from("sessions")
                .where("user_id", .equal, user.rawValue)
                .where("revoked_at", .is, SQLLiteral.null)
            if let cursor {
                query = query.where { group in
                    group.where("created_at", .lessThan, cursor.createdAt)
                        .orWhere { $0.where("created_at", .equal, cursor.createdAt).where("id", .lessThan, cursor.id.rawValue) }
                }
            }
            return try await query.orderBy("created_at", .descending).orderBy("id", .descending).limit(limit).all().map { row in
                SessionRecord(
                    id: SessionID(rawValue: try row.decode(column: "id", as: UUID.self)),
                    user: UserID(rawValue: try row.decode(column: "user_id", as: UUID.self)),
                    deviceLabel: try row.decode(column: "device_label", as: String?.self),
                    createdAt: try row.decode(column: "created_at", as: Date.self),
                    lastUsedAt: try row.decode(column: "last_used_at", as: Date.self)
                )
            }
        }
    }

    private func revoke(_ session: SessionID, now: Date, on db: any SQLDatabase) async throws {
        let rows = try await db.update("sessions").set("revoked_at", to: now)
            .where("id", .equal, session.rawValue).where("revoked_at", .is, SQLLiteral.null).returning("id").all()
        if !rows.isEmpty { try await Self.ended([session], now: now, on: db) }
    }

    private func issueRefreshToken(session: SessionID, user: UserID, now: Date, on db: any SQLDatabase) async throws -> String {
        let token = randomToken()
        try await db.insert(into: "refresh_tokens")
            .columns("token_hash", "session_id", "user_id", "created_at", "expires_at")
            .values(
                SQLBind(Self.hash(token)), SQLBind(session.rawValue), SQLBind(user.rawValue), SQLBind(now),
                SQLBind(now.addingTimeInterval(Self.refreshTokenLifetime))
            )
            .run()
        return token
    }

    static func hash(_ token: String) -> String {
        sha256Hex(token)
    }
}

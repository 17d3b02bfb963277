import FitBaseCore
import Foundation
import SQLKit

/// The administrator a console request acts as: their account and the console session it came with.
struct ConsoleAdmin: Sendable, Equatable {
    let user: UserID
    let email: String?
    let session: UUID
    /// The session's CSRF token: every form of the session carries it, every POST must send it back.
    let csrfToken: String
}

/// Console sessions (`console_sessions`): opened by a password sign-in of an administrator, carried by an `HttpOnly`
/// cookie, checked against the database on every request — so they hold across instances and end everywhere when
/// revoked, signed out, expired, or their account loses the admin role or is deleted.
struct ConsoleSessionStore: Sendable {
    /// A console session ends this long after it began, whatever happens in between.
    static let lifetime: TimeInterval = 8 * 3600

    let database: Database

    /// What a presented cookie is worth.
    enum Lookup: Sendable, Equatable {
        /// A live session of an administrator.
        case admin(ConsoleAdmin)
        /// A live session whose account is no longer an administrator.
        case notAdmin
        /// No live session has this token.
        case none
    }

    /// Forgets every session that ended (expired or revoked) before `cutoff`, whoever's it was; how many. Housekeeping
    /// runs it, so an administrator who never signs in again leaves nothing behind.
    func purge(endedBefore cutoff: Date) async throws -> Int {
        try await database.withConnection { db in
            try await db.delete(from: "console_sessions")
                .where { $0.where("expires_at", .lessThan, cutoff).orWhere("revoked_at", .lessThan, cutoff) }
                .returning("id").all().count
        }
    }

    /// Opens a session for `user` on `db` (the sign-in's transaction); returns the cookie's token and the admin. Their
    /// sessions that ended are forgotten then, so the table holds no more than each administrator's live ones and those
    /// ended since their last sign-in.
    static func open(for user: UserRecord, now: Date, on db: any SQLDatabase) async throws -> (token: String, admin: ConsoleAdmin) {
        try await db.delete(from: "console_sessions").where("user_id", .equal, user.id.rawValue)
            .where { $0.where("expires_at", .lessThanOrEqual, now).orWhere("revoked_at", .isNot, SQLLiteral.null) }
            .run()
        let token = randomToken()
        let admin = ConsoleAdmin(user: user.id, email: user.email, session: UUID.random(), csrfToken: randomToken())
        try await db.insert(into: "console_sessions")
            .columns("token_hash", "id", "user_id", "csrf_token", "created_at", "expires_at")
            .values(
                SQLBind(hash(token)), SQLBind(admin.session), SQLBind(user.id.rawValue), SQLBind(admin.csrfToken), SQLBind(now),
                SQLBind(now.addingTimeInterval(lifetime))
            )
            .run()
        return (token, admin)
    }

    /// The session the cookie token names, with its account's current role.
    func lookUp(token: String, now: Date) async throws -> Lookup {
        try await database.withConnection { db in
            guard let row = try await db.select()
                .column(SQLColumn("id", table: "console_sessions"))
                .column(SQLColumn("csrf_token", table: "console_sessions"))
                .column(SQLColumn("user_id", table: "console_sessions"))
                .column(SQLColumn("email", table: "users"))
                .column(SQLColumn("role", table: "users"))
                .column(SQLColumn("deleting_at", table: "users"))
                .from("console_sessions")
                .join("users", on: SQLColumn("id", table: "users"), .equal, SQLColumn("user_id", table: "console_sessions"))
                .where(SQLColumn("token_hash", table: "console_sessions"), .equal, SQLBind(Self.hash(token)))
                .where(SQLColumn("revoked_at", table: "console_sessions"), .is, SQLLiteral.null)
                .where(SQLColumn("expires_at", table: "console_sessions"), .greaterThan, SQLBind(now))
                .first()
            else { return .none }
            guard try row.decode(column: "deleting_at", as: Date?.self) == nil else { return .none }
            guard try row.decode(column: "role", as: String.self) == Role.admin.rawValue else { return .notAdmin }
            return .admin(ConsoleAdmin(
                user: UserID(rawValue: try row.decode(column: "user_id", as: UUID.self)), email: try row.decode(column: "email", as: String?.self),
                session: try row.decode(column: "id", as: UUID.self), csrfToken: try row.decode(column: "csrf_token", as: String.self)
            ))
        }
    }

    /// Ends the session `id` on `db` (sign-out).
    static func end(_ id: UUID, now: Date, on db: any SQLDatabase) async throws {
        try await db.update("console_sessions").set("revoked_at", to: now).where("id", .equal, id).where("revoked_at", .is, SQLLiteral.null).run()
    }

    static func hash(_ token: String) -> String {
        sha256Hex("console:\(token)")
    }
}

/// Constant-time comparison of two tokens (CSRF): the time taken does not tell how much of a guess was right.
func tokensMatch(_ presented: String?, _ expected: String) -> Bool {
    guard let presented else { return false }
    let a = Array(presented.utf8), b = Array(expected.utf8)
    var difference = UInt8(a.count == b.count ? 0 : 1)
    for index in 0..<max(a.count, b.count) {
        difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
    }
    return difference == 0
}

import FitBaseCore
import Foundation
import HTTPTypes
import SQLKit

/// A row of `users`.
struct UserRecord: Sendable, Equatable {
    var id: UserID
    var email: String?
    var passwordHash: String?
    var displayName: String?
    var role: Role
    var createdAt: Date
    var updatedAt: Date
    /// When the address was proven (a link from it was opened, or a provider vouched for it); `nil` until then.
    var emailVerifiedAt: Date? = nil
    /// The last sign-in with a password or a provider (refreshes do not count).
    var lastSignInAt: Date? = nil
}

/// SQL for `users`. Every query is keyed by the user's id or e-mail; access rules are the controller's.
struct UserStore: Sendable {
    let database: Database

    /// Inserts a new account on `db` (the caller's transaction). A taken e-mail is a 409 `email_taken`.
    static func insert(_ user: UserRecord, on db: any SQLDatabase) async throws {
        do {
            try await db.insert(into: "users")
                .columns("id", "email", "password_hash", "display_name", "role", "created_at", "updated_at", "email_verified_at")
                .values(
                    SQLBind(user.id.rawValue), SQLBind(user.email), SQLBind(user.passwordHash), SQLBind(user.displayName),
                    SQLBind(user.role.rawValue), SQLBind(user.createdAt), SQLBind(user.updatedAt), SQLBind(user.emailVerifiedAt)
                )
                .run()
        } catch where Database.isUniqueViolation(error) {
            throw Self.emailTaken
        }
    }

    /// Another account holds the address (a unique index decides between concurrent writers).
    struct EmailTaken: Error, ProblemConvertible {
        var problem: Problem { Problem(.conflict, code: .emailTaken, detail: "An account with this e-mail address already exists.") }
    }

    static let emailTaken = EmailTaken()

    func find(id: UserID) async throws -> UserRecord? {
        try await database.withConnection { db in try await Self.find(id: id, on: db) }
    }

    static func find(id: UserID, on db: any SQLDatabase) async throws -> UserRecord? {
        try await select(on: db).where("id", .equal, id.rawValue).first().map(record)
    }

    func find(email: EmailAddress) async throws -> UserRecord? {
        try await database.withConnection { db in try await Self.find(email: email, on: db) }
    }

    static func find(email: EmailAddress, on db: any SQLDatabase) async throws -> UserRecord? {
        try await select(on: db).where("email", .equal, email.value).first().map(record)
    }

    /// Sets (or, with `nil`, removes) the password hash.
    static func setPasswordHash(_ hash: String?, for id: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.update("users").set("password_hash", to: hash).set("updated_at", to: now).where("id", .equal, id.rawValue).run()
    }

    /// Records that the account's current address is proven, if it is still `email`.
    static func markEmailVerified(_ id: UserID, email: String, now: Date, on db: any SQLDatabase) async throws {
        try await db.update("users").set("email_verified_at", to: now).set("updated_at", to: now)
            .where("id", .equal, id.rawValue).where("email", .equal, email).where("email_verified_at", .is, SQLLiteral.null).run()
    }

    /// Makes `email` (proven by a link sent to it) the account's address. A taken address is a 409 `email_taken`.
    static func changeEmail(of id: UserID, to email: String, now: Date, on db: any SQLDatabase) async throws {
        do {
            try await db.update("users").set("email", to: email).set("email_verified_at", to: now).set("updated_at", to: now)
                .where("id", .equal, id.rawValue).run()
        } catch where Database.isUniqueViolation(error) {
            throw emailTaken
        }
    }

    /// Sets the role (administration and tests).
    func setRole(_ role: Role, for id: UserID, now: Date) async throws {
        try await database.transaction { db in
            try await db.update("users").set("role", to: role.rawValue).set("updated_at", to: now)
                .where("id", .equal, id.rawValue).run()
            try await CacheGenerations.bump(.sessions, on: db)
        }
    }

    /// Makes an account unreachable while it is being deleted: marked, its password and address removed (so neither
    /// signs in, and the address may be used again at once).
    static func lockOut(_ id: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.update("users").set("deleting_at", to: now).set("password_hash", to: SQLLiteral.null).set("email", to: SQLLiteral.null)
            .where("id", .equal, id.rawValue).run()
    }

    /// Accounts whose deletion began before `cutoff` and has not ended.
    static func deleting(startedBefore cutoff: Date, on db: any SQLDatabase) async throws -> [UserID] {
        try await db.select().column("id").from("users").where("deleting_at", .lessThan, cutoff).limit(100).all()
            .map { UserID(rawValue: try $0.decode(column: "id", as: UUID.self)) }
    }

    private static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select()
            .columns("id", "email", "password_hash", "display_name", "role", "created_at", "updated_at", "email_verified_at", "last_sign_in_at")
            .from("users")
    }

    private static func record(_ row: any SQLRow) throws -> UserRecord {
        UserRecord(
            id: UserID(rawValue: try row.decode(column: "id", as: UUID.self)),
            email: try row.decode(column: "email", as: String?.self),
            passwordHash: try row.decode(column: "password_hash", as: String?.self),
            displayName: try row.decode(column: "display_name", as: String?.self),
            role: Role(rawValue: try row.decode(column: "role", as: String.self)) ?? .user,
            createdAt: try row.decode(column: "created_at", as: Date.self),
            updatedAt: try row.decode(column: "updated_at", as: Date.self),
            emailVerifiedAt: try row.decode(column: "email_verified_at", as: Date?.self),
            lastSignInAt: try row.decode(column: "last_sign_in_at", as: Date?.self)
        )
    }
}

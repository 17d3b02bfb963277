import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// A row of `user_identities`.
struct IdentityRecord: Sendable, Equatable {
    let provider: IdentityProvider
    let subject: String
    let user: UserID
    let audience: String
    let isPrivateEmail: Bool
    let emailRelayEnabled: Bool
    let sealedRefreshToken: String?
    /// When the identity was first linked to the account.
    let linkedAt: Date
}

/// SQL for `user_identities`.
struct IdentityStore: Sendable {
    let database: Database

    static func find(_ provider: IdentityProvider, subject: String, on db: any SQLDatabase) async throws -> IdentityRecord? {
        try await select(on: db).where("provider", .equal, provider.rawValue).where("subject", .equal, subject).first().map(record)
    }

    func identities(of user: UserID) async throws -> [IdentityRecord] {
        try await database.withConnection { db in try await Self.identities(of: user, on: db) }
    }

    static func identities(of user: UserID, on db: any SQLDatabase) async throws -> [IdentityRecord] {
        try await select(on: db).where("user_id", .equal, user.rawValue).orderBy("created_at").all().map(record)
    }

    /// Records a first sign-in with `identity` for `user`.
    static func insert(_ identity: VerifiedIdentity, for user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.insert(into: "user_identities")
            .columns(
                "provider", "subject", "user_id", "audience", "email", "email_verified", "is_private_email",
                "email_relay_enabled", "created_at", "updated_at"
            )
            .values(
                SQLBind(identity.provider.rawValue), SQLBind(identity.subject), SQLBind(user.rawValue), SQLBind(identity.audience),
                SQLBind(identity.email), SQLBind(identity.emailVerified), SQLBind(identity.isPrivateEmail), SQLBind(true),
                SQLBind(now), SQLBind(now)
            )
            .run()
    }

    /// Refreshes what the provider says about the e-mail on a later sign-in.
    static func update(_ identity: VerifiedIdentity, now: Date, on db: any SQLDatabase) async throws {
        var update = db.update("user_identities")
            .set("email_verified", to: identity.emailVerified).set("is_private_email", to: identity.isPrivateEmail)
            .set("audience", to: identity.audience).set("updated_at", to: now)
        if let email = identity.email { update = update.set("email", to: email) }
        try await update.where("provider", .equal, identity.provider.rawValue).where("subject", .equal, identity.subject).run()
    }

    func storeSealedRefreshToken(_ sealed: String, provider: IdentityProvider, subject: String, now: Date) async throws {
        try await database.transaction { db in
            try await db.update("user_identities").set("sealed_refresh_token", to: sealed).set("updated_at", to: now)
                .where("provider", .equal, provider.rawValue).where("subject", .equal, subject).run()
        }
    }

    /// Apple's `email-enabled` / `email-disabled`: whether mail to the private relay address is forwarded.
    func setEmailRelayEnabled(_ enabled: Bool, provider: IdentityProvider, subject: String, now: Date) async throws {
        try await database.transaction { db in
            try await db.update("user_identities").set("email_relay_enabled", to: enabled).set("updated_at", to: now)
                .where("provider", .equal, provider.rawValue).where("subject", .equal, subject).run()
        }
    }

    private static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns(
            "provider", "subject", "user_id", "audience", "is_private_email", "email_relay_enabled", "sealed_refresh_token", "created_at"
        ).from("user_identities")
    }

    private static func record(_ row: any SQLRow) throws -> IdentityRecord {
        IdentityRecord(
            provider: IdentityProvider(rawValue: try row.decode(column: "provider", as: String.self)) ?? .apple,
            subject: try row.decode(column: "subject", as: String.self),
            user: UserID(rawValue: try row.decode(column: "user_id", as: UUID.self)),
            audience: try row.decode(column: "audience", as: String.self),
            isPrivateEmail: try row.decode(column: "is_private_email", as: Bool.self),
            emailRelayEnabled: try row.decode(column: "email_relay_enabled", as: Bool.self),
            sealedRefreshToken: try row.decode(column: "sealed_refresh_token", as: String?.self),
            linkedAt: try row.decode(column: "created_at", as: Date.self)
        )
    }
}

/// Sign-in identities, exported without tokens; deleting them queues the revocation of Apple's tokens.
struct IdentitiesOwner: InMemoryAccountDataOwner {
    let section = "signInIdentities"
    /// `nil` when Sign in with Apple has no key configured: no token was ever stored then.
    let appleTokens: AppleTokenRevoker?

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let columns = ["provider", "email", "is_private_email", "email_relay_enabled", "created_at"]
        return try await exportRows(of: user, columns, from: "user_identities", orderBy: "created_at", on: db) { row in
            [
                "provider": try row.decode(column: "provider", as: String.self),
                "email": try row.decode(column: "email", as: String?.self),
                "isPrivateEmail": try row.decode(column: "is_private_email", as: Bool.self),
                "emailRelayEnabled": try row.decode(column: "email_relay_enabled", as: Bool.self),
                "linkedAt": try row.decode(column: "created_at", as: Date.self).formatted(.iso8601),
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await appleTokens?.queueRevocations(of: user, now: now, on: db)
        try await db.delete(from: "user_identities").where("user_id", .equal, user.rawValue).run()
    }
}

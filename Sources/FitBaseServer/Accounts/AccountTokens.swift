import HTTPTypes
import FitBaseCore
import Foundation
import SQLKit

/// What a link sent by e-mail lets its holder do.
enum AccountTokenPurpose: String, Sendable {
    /// Prove the account's address (24 hours).
    case verifyEmail = "verify-email"
    /// Set a new password (30 minutes).
    case resetPassword = "reset-password"
    /// Make the address the link was sent to the account's new address (24 hours).
    case changeEmail = "change-email"

    var lifetime: TimeInterval {
        switch self {
        case .verifyEmail, .changeEmail: 24 * 3600
        case .resetPassword: 30 * 60
        }
    }
}

/// A redeemed link: whose account, and the address it was sent to.
struct RedeemedAccountToken: Sendable, Equatable {
    let user: UserID
    let purpose: AccountTokenPurpose
    let email: String
}

/// Single-use link tokens: 256 random bits, stored only as SHA-256, expiring, spent on first use, and all of an
/// account's outstanding ones void when its password changes.
enum AccountTokens {
    /// Makes a token for `user` and returns it (the only time it exists in clear).
    static func issue(_ purpose: AccountTokenPurpose, for user: UserID, email: String, now: Date, on db: any SQLDatabase) async throws -> String {
        let token = randomToken()
        try await db.insert(into: "account_tokens")
            .columns("token_hash", "user_id", "purpose", "email", "created_at", "expires_at")
            .values(
                SQLBind(hash(token)), SQLBind(user.rawValue), SQLBind(purpose.rawValue), SQLBind(email), SQLBind(now),
                SQLBind(now.addingTimeInterval(purpose.lifetime))
            )
            .run()
        return token
    }

    /// Spends `token` if it is one of `purposes`, unused and unexpired; otherwise throws the problem saying which.
    /// The spend is guarded on `used_at IS NULL`, so two concurrent redemptions cannot both succeed.
    static func redeem(_ token: String, purposes: Set<AccountTokenPurpose>, now: Date, on db: any SQLDatabase) async throws -> RedeemedAccountToken {
        let found = try await peek(token, purposes: purposes, now: now, on: db)
        let spent = try await db.update("account_tokens").set("used_at", to: now)
            .where("token_hash", .equal, hash(token)).where("used_at", .is, SQLLiteral.null)
            .returning("token_hash").all()
        guard !spent.isEmpty else { throw used }
        return found
    }

    /// What `token` would redeem to, without spending it (the reset page checks the link before showing its form).
    static func peek(_ token: String, purposes: Set<AccountTokenPurpose>, now: Date, on db: any SQLDatabase) async throws -> RedeemedAccountToken {
        guard let row = try await db.select().columns("user_id", "purpose", "email", "expires_at", "used_at").from("account_tokens")
            .where("token_hash", .equal, hash(token)).first(),
            let purpose = AccountTokenPurpose(rawValue: try row.decode(column: "purpose", as: String.self)), purposes.contains(purpose)
        else { throw invalid }
        if try row.decode(column: "used_at", as: Date?.self) != nil { throw used }
        guard try row.decode(column: "expires_at", as: Date.self) > now else { throw expired }
        return RedeemedAccountToken(
            user: UserID(rawValue: try row.decode(column: "user_id", as: UUID.self)), purpose: purpose,
            email: try row.decode(column: "email", as: String.self)
        )
    }

    /// Voids every outstanding token of `user` (the password changed: links sent before are useless).
    static func revokeAll(of user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "account_tokens").where("user_id", .equal, user.rawValue).where("used_at", .is, SQLLiteral.null).run()
    }

    /// Voids the outstanding tokens of `user` for `purpose` (a new verification link replaces the old ones).
    static func revoke(_ purpose: AccountTokenPurpose, of user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "account_tokens").where("user_id", .equal, user.rawValue)
            .where("purpose", .equal, purpose.rawValue).where("used_at", .is, SQLLiteral.null).run()
    }

    /// Drops tokens that expired before `cutoff`.
    static func purge(expiredBefore cutoff: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "account_tokens").where("expires_at", .lessThan, cutoff).run()
    }

    static let missing = Problem(.badRequest, code: .tokenInvalid, detail: "This link is incomplete. Open it again from the e-mail, or ask for a new one.")
    static let invalid = Problem(.badRequest, code: .tokenInvalid, detail: "This link is not valid. Ask for a new one.")
    static let used = Problem(.badRequest, code: .tokenUsed, detail: "This link was already used. Ask for a new one if you need it.")
    static let expired = Problem(.badRequest, code: .tokenExpired, detail: "This link has expired. Ask for a new one.")

    private static func hash(_ token: String) -> String {
        sha256Hex("account-token:\(token)")
    }
}

import FitBaseCore
import Foundation
import Logging
import SQLKit

/// Deletes password accounts whose address was never verified, once they are older than
/// `FITBASE_UNVERIFIED_ACCOUNT_DAYS`: a sign-up with someone else's address (or a flood of made-up ones) does not hold
/// the address, or a row, for ever. Each goes through the deletion registry like `DELETE /v1/me`, one transaction per
/// account. Accounts with a provider identity or a subscription are kept: a person who pays, or whom Apple or Google
/// vouches for, is not a squatter.
struct UnverifiedAccountSweeper: Sendable {
    let database: Database
    let registry: AccountDataRegistry
    /// How long an account may stay unverified.
    let lifetime: TimeInterval
    let logger: Logger

    /// Deletes what is due at `now`, `batch` accounts a query; returns how many.
    @discardableResult
    func sweep(now: Date, batch: Int = 200) async throws -> Int {
        var deleted = 0
        while true {
            let due = try await database.withConnection { [lifetime] db in
                try await db.select().column(SQLColumn("id", table: "users")).from("users")
                    .where(SQLColumn("password_hash", table: "users"), .isNot, SQLLiteral.null)
                    .where(SQLColumn("email_verified_at", table: "users"), .is, SQLLiteral.null)
                    .where(SQLColumn("created_at", table: "users"), .lessThan, SQLBind(now.addingTimeInterval(-lifetime)))
                    .where(SQLRaw("NOT EXISTS (SELECT 1 FROM user_identities i WHERE i.user_id = users.id)"))
                    .where(SQLRaw("NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = users.id)"))
                    .limit(batch).all()
                    .map { UserID(rawValue: try $0.decode(column: "id", as: UUID.self)) }
            }
            for user in due { try await registry.deleteAccount(user, now: now, database: database) }
            deleted += due.count
            if due.count < batch { break }
        }
        if deleted > 0 { logger.notice("deleted accounts never verified", metadata: ["count": "\(deleted)"]) }
        return deleted
    }
}

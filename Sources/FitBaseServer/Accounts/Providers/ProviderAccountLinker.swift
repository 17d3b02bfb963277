import FitBaseCore
import Foundation
import Logging
import SQLKit

/// Finds or creates the account for a verified provider identity and starts a session, in one transaction.
///
/// Accounts are keyed by the provider's `sub`. A first sign-in links to an existing account with the same address
/// only when the provider vouches for the address (`email_verified`):
/// * the account's address is verified too → the identity joins it;
/// * the account's address was never verified → whoever made it with a password may not own the address (anyone can
///   sign up with someone else's). The provider's verified identity takes the account over: the password is
///   removed, every session, device and pending e-mail link of the account ends, and the address counts as verified.
///   This is the rule Firebase applies; without it, a password set up in advance by an attacker would open the
///   owner's account once the owner signs in with Apple or Google.
struct ProviderAccountLinker: Sendable {
    let database: Database
    let sessions: SessionStore
    let logger: Logger

    struct Outcome: Sendable {
        let user: UserRecord
        let session: SessionID
        let refreshToken: String
        let isNewUser: Bool
    }

    func signIn(_ identity: VerifiedIdentity, displayName: String?, deviceLabel: String?, now: Date) async throws -> Outcome {
        let (outcome, tookOver) = try await database.transaction { [sessions] db in
            var isNewUser = false
            var tookOver = false
            let userID: UserID
            if let existing = try await IdentityStore.find(identity.provider, subject: identity.subject, on: db) {
                try await IdentityStore.update(identity, now: now, on: db)
                userID = existing.user
            } else {
                let verifiedEmail = identity.emailVerified ? identity.email.flatMap(EmailAddress.init) : nil
                if let verifiedEmail, let owner = try await UserStore.find(email: verifiedEmail, on: db) {
                    userID = owner.id
                    if owner.emailVerifiedAt == nil {
                        try await Self.takeOver(owner, now: now, on: db)
                        tookOver = true
                    }
                } else {
                    userID = UserID()
                    let user = UserRecord(
                        id: userID, email: verifiedEmail?.value, passwordHash: nil,
                        displayName: displayName, role: .user, createdAt: now, updatedAt: now,
                        emailVerifiedAt: verifiedEmail == nil ? nil : now
                    )
                    try await UserStore.insert(user, on: db)
                    isNewUser = true
                }
                try await IdentityStore.insert(identity, for: userID, now: now, on: db)
            }
            let (session, refreshToken) = try await sessions.start(user: userID, deviceLabel: deviceLabel, now: now, on: db)
            guard let user = try await UserStore.find(id: userID, on: db) else { throw Problem.internalError }
            return (Outcome(user: user, session: session, refreshToken: refreshToken, isNewUser: isNewUser), tookOver)
        }
        if tookOver {
            logger.notice(
                "a provider's verified identity took over an account whose address was never verified; its password and sessions are gone",
                metadata: ["user": "\(outcome.user.id)", "provider": "\(identity.provider.rawValue)"]
            )
        }
        return outcome
    }

    /// Strips an unverified account of everything its password gave: the password, sessions, trusted devices and
    /// outstanding links; the provider's word proves the address.
    private static func takeOver(_ account: UserRecord, now: Date, on db: any SQLDatabase) async throws {
        try await UserStore.setPasswordHash(nil, for: account.id, now: now, on: db)
        try await SessionStore.revokeAll(of: account.id, except: nil, now: now, on: db)
        try await SignInThrottle.forgetDevices(of: account.id, on: db)
        try await AccountTokens.revokeAll(of: account.id, on: db)
        if let email = account.email { try await UserStore.markEmailVerified(account.id, email: email, now: now, on: db) }
    }
}

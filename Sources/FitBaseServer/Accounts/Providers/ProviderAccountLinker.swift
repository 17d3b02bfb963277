import FitBaseCore
import Foundation
import Logging
import SQLKit

/// Finds or creates the account for a verified provider identity and starts a session, in one transaction.
///
/// Accounts are keyed by the provider's `sub`. A first sign-in joins an existing account with the same address only
/// when the provider vouches for the address (`email_verified`, and for Google only addresses Google answers for:
/// `gmail.com`, or a Workspace token's `hd`). A join never leaves a password beside the provider:
/// * an account whose address was never verified (a password sign-up nobody confirmed: anyone can sign up with
///   someone else's address) is not joined at all. It is deleted — through the registry, as `DELETE /v1/me` and the
///   sweeper of unverified accounts delete, so every feature's rows go: group memberships (left as a member leaves,
///   the admin role handed on, invites revoked), consents, profile, photo, devices, sessions, links — and the
///   identity gets a new account in the same transaction (`linked: created`). Nothing the pre-registrant set up, and
///   no id the pre-registrant's other accounts saw, leads to the owner. The bulk of the deletion (photo objects,
///   health samples) runs after the commit; housekeeping finishes it if the server stops first;
/// * a verified account with a password loses it: a verification link may have been confirmed by someone who saw
///   the mail. Every session ends — and with them the devices they registered for pushes —, trusted devices and
///   outstanding links (a pending e-mail change among them) are void, and the answer says `linked: joined`;
/// * an account without a password (another provider's) keeps its sessions: the provider's word and the other
///   provider's agree on the address.
/// Either way the address is told by e-mail. The owner can set a password again with a reset link, which proves the
/// mailbox.
struct ProviderAccountLinker: Sendable {
    let database: Database
    let sessions: SessionStore
    let composer: AccountMailComposer
    let outbox: Outbox
    /// Deletes a never-verified account a provider's verified address replaces.
    let registry: AccountDataRegistry
    let logger: Logger

    /// How a first sign-in with an identity found its account.
    enum Linked: String, Sendable {
        /// A new account was made for it.
        case created
        /// It joined the existing account with its verified address.
        case joined
    }

    struct Outcome: Sendable {
        let user: UserRecord
        let session: SessionID
        let refreshToken: String
        /// `nil` when the identity was already the account's.
        let linked: Linked?
        var isNewUser: Bool { linked == .created }
    }

    func signIn(_ identity: VerifiedIdentity, displayName: String?, deviceLabel: String?, now: Date) async throws -> Outcome {
        let provider = identity.provider.displayName
        let (outcome, strippedPassword, replaced) = try await database.transaction { [sessions, composer, outbox, registry] db in
            try await IdentityTokenNonces.spend(identity, on: db)
            var linked: Linked?
            var strippedPassword = false
            var replaced: UserID?
            let userID: UserID
            if let existing = try await IdentityStore.find(identity.provider, subject: identity.subject, on: db) {
                try await IdentityStore.update(identity, now: now, on: db)
                userID = existing.user
            } else {
                let verifiedEmail = identity.emailVerified ? identity.email.flatMap(EmailAddress.init) : nil
                var owner: UserRecord?
                if let verifiedEmail { owner = try await UserStore.find(email: verifiedEmail, on: db) }
                if let verifiedEmail, let owner, owner.emailVerifiedAt != nil {
                    userID = owner.id
                    linked = .joined
                    if owner.passwordHash != nil {
                        try await Self.stripCredentials(of: owner, now: now, on: db)
                        strippedPassword = true
                    }
                    try await outbox.enqueue(
                        .email(try composer.providerJoined(to: verifiedEmail.value, provider: provider, passwordRemoved: strippedPassword)),
                        user: owner.id, now: now, on: db
                    )
                } else {
                    if let owner {
                        try await registry.beginDeletion(of: owner.id, now: now, on: db)
                        replaced = owner.id
                    }
                    userID = UserID()
                    let user = UserRecord(
                        id: userID, email: verifiedEmail?.value, passwordHash: nil,
                        displayName: displayName, role: .user, createdAt: now, updatedAt: now,
                        emailVerifiedAt: verifiedEmail == nil ? nil : now
                    )
                    try await UserStore.insert(user, on: db)
                    linked = .created
                    if let verifiedEmail, replaced != nil {
                        let notice = try composer.unconfirmedAccountReplaced(to: verifiedEmail.value, provider: provider)
                        try await outbox.enqueue(.email(notice), user: userID, now: now, on: db)
                    }
                }
                try await IdentityStore.insert(identity, for: userID, now: now, on: db)
            }
            let (session, refreshToken) = try await sessions.start(user: userID, deviceLabel: deviceLabel, now: now, on: db)
            guard let user = try await UserStore.find(id: userID, on: db) else { throw Problem.internalError }
            let outcome = Outcome(user: user, session: session, refreshToken: refreshToken, linked: linked)
            return (outcome, strippedPassword, replaced)
        }
        if strippedPassword {
            logger.notice(
                "a provider's verified identity joined an account with a password; the password and its sessions are gone",
                metadata: ["user": "\(outcome.user.id)", "provider": "\(identity.provider.rawValue)"]
            )
        }
        if let replaced {
            logger.notice(
                "a provider's verified identity replaced an account never verified; that account is deleted",
                metadata: ["user": "\(outcome.user.id)", "deleted": "\(replaced)", "provider": "\(provider)"]
            )
            do {
                try await registry.finishDeletion(of: replaced, now: now, database: database)
            } catch {
                // The account is unreachable already; housekeeping finishes its deletion.
                logger.warning(
                    "the replaced account's deletion stopped; housekeeping finishes it", metadata: ["user": "\(replaced)", "error": "\(error)"]
                )
            }
        }
        return outcome
    }

    /// Strips an account of everything a password may have given someone: the password, sessions (and the push
    /// devices they registered), trusted devices and outstanding links.
    private static func stripCredentials(of account: UserRecord, now: Date, on db: any SQLDatabase) async throws {
        try await UserStore.setPasswordHash(nil, for: account.id, now: now, on: db)
        try await SessionStore.revokeAll(of: account.id, except: nil, now: now, on: db)
        try await SignInThrottle.forgetDevices(of: account.id, on: db)
        try await AccountTokens.revokeAll(of: account.id, on: db)
    }
}

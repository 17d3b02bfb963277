import FitBaseCore
import Foundation
import SQLKit

/// Finds or creates the account for a verified provider identity and starts a session, in one transaction.
///
/// Accounts are keyed by the provider's `sub`. A first sign-in links to an existing account only when the provider
/// vouches for the e-mail (`email_verified`) and an account already uses that address; otherwise it creates one.
struct ProviderAccountLinker: Sendable {
    let database: Database
    let sessions: SessionStore

    struct Outcome: Sendable {
        let user: UserRecord
        let session: SessionID
        let refreshToken: String
        let isNewUser: Bool
    }

    func signIn(_ identity: VerifiedIdentity, displayName: String?, deviceLabel: String?, now: Date) async throws -> Outcome {
        try await database.transaction { [sessions] db in
            var isNewUser = false
            let userID: UserID
            if let existing = try await IdentityStore.find(identity.provider, subject: identity.subject, on: db) {
                try await IdentityStore.update(identity, now: now, on: db)
                userID = existing.user
            } else {
                let verifiedEmail = identity.emailVerified ? identity.email.flatMap(EmailAddress.init) : nil
                if let verifiedEmail, let owner = try await Self.user(withEmail: verifiedEmail, on: db) {
                    userID = owner
                } else {
                    userID = UserID()
                    let user = UserRecord(
                        id: userID, email: verifiedEmail?.value, passwordHash: nil,
                        displayName: displayName, role: .user, createdAt: now, updatedAt: now
                    )
                    try await UserStore.insert(user, on: db)
                    isNewUser = true
                }
                try await IdentityStore.insert(identity, for: userID, now: now, on: db)
            }
            guard let user = try await UserStore.find(id: userID, on: db) else { throw Problem.internalError }
            let (session, refreshToken) = try await sessions.start(user: userID, deviceLabel: deviceLabel, now: now, on: db)
            return Outcome(user: user, session: session, refreshToken: refreshToken, isNewUser: isNewUser)
        }
    }

    private static func user(withEmail email: EmailAddress, on db: any SQLDatabase) async throws -> UserID? {
        try await db.select().column("id").from("users").where("email", .equal, email.value).first()
            .map { UserID(rawValue: try $0.decode(column: "id", as: UUID.self)) }
    }
}

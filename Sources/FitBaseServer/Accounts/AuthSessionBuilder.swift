import FitBaseAPI
import FitBaseCore
import Foundation

/// Builds the `AuthSession` every sign-in path answers with: a fresh access token plus the user.
struct AuthSessionBuilder: Sendable {
    let signer: SessionTokenSigner
    let profiles: ProfileStore
    let identities: IdentityStore
    let groups: GroupStore

    func authSession(
        _ user: UserRecord, session: SessionID, refreshToken: String, authenticatedAt: Date, now: Date, isNewUser: Bool? = nil
    ) async throws -> Components.Schemas.AuthSession {
        let (accessToken, expiresIn) = try await signer.issue(user: user.id, session: session, authenticatedAt: authenticatedAt, now: now)
        return .init(
            user: try await self.user(user), accessToken: accessToken, refreshToken: refreshToken,
            expiresIn: expiresIn, tokenType: .bearer, isNewUser: isNewUser
        )
    }

    func user(_ user: UserRecord) async throws -> Components.Schemas.User {
        UserWire.user(
            user, profile: try await profiles.profile(of: user.id), identities: try await identities.identities(of: user.id),
            currentGroup: try await groups.membership(of: user.id)?.group
        )
    }
}

extension AuthSessionBuilder {
    /// The label a new session shows in the account's session list: the device's name, trimmed, at most 100 characters.
    static func deviceLabel(_ name: String?) -> String? {
        guard let name = name?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty else { return nil }
        return String(name.prefix(100))
    }
}

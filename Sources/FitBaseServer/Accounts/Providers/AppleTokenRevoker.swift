import FitBaseCore
import Foundation
import Logging
import SQLKit

/// Keeps and revokes the Apple refresh tokens of Sign in with Apple accounts. Tokens are sealed under the master
/// key, bound to the identity they belong to.
struct AppleTokenRevoker: Sendable {
    let identities: IdentityStore
    let client: any AppleTokenClient
    let masterKey: MasterKey
    let outbox: Outbox
    let logger: Logger

    /// Trades the app's authorization code for a refresh token and stores it sealed. Failures are logged, not
    /// thrown: the sign-in itself was valid, and only later revocation depends on the token.
    func storeRefreshToken(code: String, for identity: VerifiedIdentity, now: Date) async {
        do {
            let token = try await client.exchange(code: code, clientID: identity.audience)
            let sealed = try masterKey.seal(Data(token.utf8), context: Self.context(identity.provider, identity.subject))
            try await identities.storeSealedRefreshToken(sealed.base64EncodedString(), provider: identity.provider, subject: identity.subject, now: now)
        } catch {
            logger.warning("Apple authorization code exchange failed; the token cannot be revoked later", metadata: ["error": "\(error)"])
        }
    }

    /// Queues the revocation of every stored Apple token of `user` in the deletion's transaction: the outbox revokes
    /// them at Apple after the commit, retrying while Apple cannot be reached, so the account's deletion neither
    /// waits for Apple nor loses the revocation.
    func queueRevocations(of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        for identity in try await IdentityStore.identities(of: user, on: db) where identity.provider == .apple {
            guard let sealed = identity.sealedRefreshToken.flatMap({ Data(base64Encoded: $0) }) else { continue }
            let token = try masterKey.open(sealed, context: Self.context(identity.provider, identity.subject))
            try await outbox.enqueue(
                .appleTokenRevocation(refreshToken: String(decoding: token, as: UTF8.self), clientID: identity.audience),
                user: user, now: now, on: db
            )
        }
    }

    static func context(_ provider: IdentityProvider, _ subject: String) -> String {
        "user_identities/\(provider.rawValue)/\(subject)/refresh_token"
    }
}

import FitBaseCore
import Foundation

/// The writes of a password sign-in, in one transaction: the new session, and the device token that lets this device
/// past the sign-in throttle later. (A sign-up opens no session: the app signs in after it.)
struct PasswordSessions: Sendable {
    let database: Database
    let sessions: SessionStore
    let throttle: SignInThrottle

    /// Opens a session for `user`, whose password matched on the admitted `attempt`.
    func signIn(_ user: UserID, attempt: SignInThrottle.Attempt, presentedToken: String?, deviceLabel: String?, now: Date) async throws -> Opened {
        try await database.transaction { [sessions, throttle] db in
            let deviceToken = try await throttle.succeeded(attempt, presentedToken: presentedToken, user: user, now: now, on: db)
            let (session, refreshToken) = try await sessions.start(user: user, deviceLabel: deviceLabel, now: now, on: db)
            return Opened(session: session, refreshToken: refreshToken, deviceToken: deviceToken)
        }
    }

    /// A session just opened: its id, its refresh token and the device's token, each shown once.
    struct Opened: Sendable {
        let session: SessionID
        let refreshToken: String
        let deviceToken: String
    }
}

import FitBaseCore
import Foundation

/// The writes of a password sign-up and sign-in, each in one transaction: the account and its queued verification
/// mail (sign-up), the new session, and the device token that lets this device past the sign-in throttle later.
struct PasswordSessions: Sendable {
    let database: Database
    let sessions: SessionStore
    let throttle: SignInThrottle
    let credentials: AccountCredentials

    /// Creates `user` (its address not yet verified) and its first session.
    func signUp(_ user: UserRecord, email: String, deviceLabel: String?, now: Date) async throws -> Opened {
        try await database.transaction { [sessions, credentials] db in
            try await UserStore.insert(user, on: db)
            try await credentials.queueVerification(for: user, email: email, now: now, on: db)
            let (session, refreshToken) = try await sessions.start(user: user.id, deviceLabel: deviceLabel, now: now, on: db)
            return Opened(session: session, refreshToken: refreshToken, deviceToken: try await SignInThrottle.trustDevice(of: user.id, now: now, on: db))
        }
    }

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

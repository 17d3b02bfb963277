import FitBaseCore
import Foundation

extension AccountsFeature {
    /// The password check of every sign-in with an e-mail and password (the API's and the console's): the attempt is
    /// counted by the ``SignInThrottle`` first (429 over a limit), then the password is compared — against a decoy hash
    /// when no account has the address, so the time taken does not tell. Throws 401 `invalid_credentials` on a
    /// mismatch; returns the account and the admitted attempt, for ``SignInThrottle/succeeded(_:presentedToken:user:now:on:)``.
    func checkPassword(
        email: String, password: String, deviceToken: String?, client: String?, now: Date
    ) async throws -> (user: UserRecord, attempt: SignInThrottle.Attempt) {
        let invalid = Problem.unauthenticated(.invalidCredentials, "The e-mail address or password is wrong.")
        guard let email = EmailAddress(email) else { throw invalid }
        let attempt = try await throttle.admit(email, deviceToken: deviceToken, client: client, now: now)
        let user = try await users.find(email: email)
        let matches: Bool
        if let user, let hash = user.passwordHash {
            matches = try await hasher.verify(password, against: hash)
        } else {
            try await hasher.verifyDecoy(password)
            matches = false
        }
        guard let user, matches else { throw invalid }
        return (user, attempt)
    }
}

import FitBaseAPI
import Foundation

/// What a redeemed e-mail link did.
public enum EmailLinkPurpose: String, Sendable, Equatable {
    /// The account's address is now verified.
    case verifyEmail
    /// The account's address is now the one the link was sent to.
    case changeEmail
}

extension FitBaseClient {
    /// E-mails a password-reset link to `email` if an account has it. The server answers the same either way, so
    /// tell the user "if an account uses this address, a link is on its way".
    public func requestPasswordReset(email: String) async throws(FitBaseError) {
        _ = try await call { try await self.api.requestPasswordReset(body: .json(.init(email: email))).accepted }
    }

    /// Sets a new password with the `token` of a reset link (opened in the app through its universal link). Every
    /// session of the account ends, this device's included: sign in again with the new password.
    public func resetPassword(token: String, newPassword: String) async throws(FitBaseError) {
        _ = try await call { try await self.api.resetPassword(body: .json(.init(token: token, newPassword: newPassword))).noContent }
    }

    /// Changes the signed-in user's password; the user's other devices are signed out, this one stays signed in.
    public func changePassword(current: String, new: String) async throws(FitBaseError) {
        _ = try await call { try await self.api.changePassword(body: .json(.init(currentPassword: current, newPassword: new))).noContent }
    }

    /// Asks to change the signed-in user's address to `newEmail` (send the current `password` when the account has
    /// one). Nothing changes until the link sent to the new address is opened; returns that address, normalised.
    @discardableResult
    public func changeEmail(to newEmail: String, password: String?) async throws(FitBaseError) -> String {
        try await call { try await self.api.changeEmail(body: .json(.init(newEmail: newEmail, password: password))).accepted.body.json.pendingEmail }
    }

    /// E-mails the signed-in user a new verification link (the earlier ones stop working).
    public func resendVerification() async throws(FitBaseError) {
        _ = try await call { try await self.api.requestEmailVerification().accepted }
    }

    /// Redeems the `token` of a verification or e-mail change link the app was opened with; returns the proven
    /// address and what the link did.
    @discardableResult
    public func verifyEmail(token: String) async throws(FitBaseError) -> (email: String, purpose: EmailLinkPurpose) {
        let result = try await call { try await self.api.verifyEmail(body: .json(.init(token: token))).ok.body.json }
        return (result.email, result.purpose == .changeEmail ? .changeEmail : .verifyEmail)
    }
}

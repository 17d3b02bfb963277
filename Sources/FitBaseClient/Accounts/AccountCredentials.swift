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
        let output = try await call { try await self.api.requestPasswordReset(body: .json(.init(email: email))) }
        switch output {
        case .accepted: return
        case .badRequest(let response): throw .from(statusCode: 400, problem: try? response.body.applicationProblemJson)
        case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
        case .default(let statusCode, let response): throw .from(statusCode: statusCode, problem: try? response.body.applicationProblemJson)
        }
    }

    /// Sets a new password with the `token` of a reset link (opened in the app through its universal link). Every
    /// session of the account ends, this device's included: sign in again with the new password.
    public func resetPassword(token: String, newPassword: String) async throws(FitBaseError) {
        let output = try await call { try await self.api.resetPassword(body: .json(.init(token: token, newPassword: newPassword))) }
        switch output {
        case .noContent: return
        case .badRequest(let response): throw .from(statusCode: 400, problem: try? response.body.applicationProblemJson)
        case .serviceUnavailable(let response): throw .from(statusCode: 503, problem: try? response.body.applicationProblemJson)
        case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
        case .default(let statusCode, let response): throw .from(statusCode: statusCode, problem: try? response.body.applicationProblemJson)
        }
    }

    /// Changes the signed-in user's password; the user's other devices are signed out, this one stays signed in.
    public func changePassword(current: String, new: String) async throws(FitBaseError) {
        let output = try await call { try await self.api.changePassword(body: .json(.init(currentPassword: current, newPassword: new))) }
        switch output {
        case .noContent: return
        case .badRequest(let response): throw .from(statusCode: 400, problem: try? response.body.applicationProblemJson)
        case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
        case .forbidden(let response): throw .from(statusCode: 403, problem: try? response.body.applicationProblemJson)
        case .conflict(let response): throw .from(statusCode: 409, problem: try? response.body.applicationProblemJson)
        case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
        case .serviceUnavailable(let response): throw .from(statusCode: 503, problem: try? response.body.applicationProblemJson)
        case .default(let statusCode, let response): throw .from(statusCode: statusCode, problem: try? response.body.applicationProblemJson)
        }
    }

    /// Asks to change the signed-in user's address to `newEmail` (send the current `password` when the account has
    /// one). Nothing changes until the link sent to the new address is opened; returns that address, normalised.
    @discardableResult
    public func changeEmail(to newEmail: String, password: String?) async throws(FitBaseError) -> String {
        let output = try await call { try await self.api.changeEmail(body: .json(.init(newEmail: newEmail, password: password))) }
        switch output {
        case .accepted(let accepted): return try FitBaseError.decoding { try accepted.body.json.pendingEmail }
        case .badRequest(let response): throw .from(statusCode: 400, problem: try? response.body.applicationProblemJson)
        case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
        case .forbidden(let response): throw .from(statusCode: 403, problem: try? response.body.applicationProblemJson)
        case .conflict(let response): throw .from(statusCode: 409, problem: try? response.body.applicationProblemJson)
        case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
        case .serviceUnavailable(let response): throw .from(statusCode: 503, problem: try? response.body.applicationProblemJson)
        case .default(let statusCode, let response): throw .from(statusCode: statusCode, problem: try? response.body.applicationProblemJson)
        }
    }

    /// E-mails the signed-in user a new verification link (the earlier ones stop working).
    public func resendVerification() async throws(FitBaseError) {
        let output = try await call { try await self.api.requestEmailVerification() }
        switch output {
        case .accepted: return
        case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
        case .conflict(let response): throw .from(statusCode: 409, problem: try? response.body.applicationProblemJson)
        case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
        case .default(let statusCode, let response): throw .from(statusCode: statusCode, problem: try? response.body.applicationProblemJson)
        }
    }

    /// Redeems the `token` of a verification or e-mail change link the app was opened with; returns the proven
    /// address and what the link did.
    @discardableResult
    public func verifyEmail(token: String) async throws(FitBaseError) -> (email: String, purpose: EmailLinkPurpose) {
        let output = try await call { try await self.api.verifyEmail(body: .json(.init(token: token))) }
        switch output {
        case .ok(let ok):
            let result = try FitBaseError.decoding { try ok.body.json }
            return (result.email, result.purpose == .changeEmail ? .changeEmail : .verifyEmail)
        case .badRequest(let response): throw .from(statusCode: 400, problem: try? response.body.applicationProblemJson)
        case .conflict(let response): throw .from(statusCode: 409, problem: try? response.body.applicationProblemJson)
        case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
        case .default(let statusCode, let response): throw .from(statusCode: statusCode, problem: try? response.body.applicationProblemJson)
        }
    }
}

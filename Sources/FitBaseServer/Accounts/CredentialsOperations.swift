import FitBaseAPI
import FitBaseCore
import Foundation

/// The JSON endpoints of e-mail verification, password reset and change, and e-mail change.
protocol CredentialsOperations: FeatureOperations { var accountsFeature: AccountsFeature { get } }

extension CredentialsOperations {
    func requestEmailVerification(_ input: Operations.RequestEmailVerification.Input) async throws -> Operations.RequestEmailVerification.Output {
        let caller = try RequestScope.requireCaller()
        try await accountsFeature.credentials.resendVerification(to: caller.user, client: RequestScope.current.clientAddress, now: clock.now)
        return .accepted(.init())
    }

    func verifyEmail(_ input: Operations.VerifyEmail.Input) async throws -> Operations.VerifyEmail.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let redeemed = try await accountsFeature.credentials.verifyEmail(token: body.token, now: clock.now)
        return .ok(.init(body: .json(.init(email: redeemed.email, purpose: redeemed.purpose == .changeEmail ? .changeEmail : .verifyEmail))))
    }

    func requestPasswordReset(_ input: Operations.RequestPasswordReset.Input) async throws -> Operations.RequestPasswordReset.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        guard let email = EmailAddress(body.email) else {
            throw Problem.validationFailed([.init(field: "email", message: "is not a valid e-mail address")])
        }
        try await accountsFeature.credentials.requestPasswordReset(email, client: RequestScope.current.clientAddress, now: clock.now)
        return .accepted(.init())
    }

    func resetPassword(_ input: Operations.ResetPassword.Input) async throws -> Operations.ResetPassword.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        try await accountsFeature.credentials.resetPassword(token: body.token, newPassword: body.newPassword, now: clock.now)
        return .noContent(.init())
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        try await accountsFeature.credentials.changePassword(of: caller, current: body.currentPassword, new: body.newPassword, now: clock.now)
        return .noContent(.init())
    }

    func changeEmail(_ input: Operations.ChangeEmail.Input) async throws -> Operations.ChangeEmail.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let pending = try await accountsFeature.credentials.requestEmailChange(of: caller, to: body.newEmail, password: body.password, now: clock.now)
        return .accepted(.init(body: .json(.init(pendingEmail: pending))))
    }
}

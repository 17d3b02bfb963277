import FitBaseCore
import FitBaseAPI
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime

/// The small pages e-mailed links open in a browser: `/auth/verify` (proves an address) and `/auth/reset` (a form
/// for a new password). They redeem tokens through the same ``AccountCredentials`` as the JSON endpoints.
///
/// A GET never spends a token: mail scanners, link previews and prefetchers follow links, so opening one only shows a
/// page whose button (a POST) acts. Every outcome is a page, a missing token included — a person never gets JSON.
protocol AccountPagesOperations: FeatureOperations { var accountsFeature: AccountsFeature { get } }

extension AccountPagesOperations {
    func getEmailVerificationPage(_ input: Operations.GetEmailVerificationPage.Input) async throws -> Operations.GetEmailVerificationPage.Output {
        do {
            let token = try Self.present(input.query.token)
            let link = try await accountsFeature.credentials.checkVerificationToken(token, now: clock.now)
            let prompt = link.purpose == .changeEmail
                ? "Make \(link.email) the e-mail address of your \(accountsFeature.composer.appName) account?"
                : "Confirm \(link.email) as the e-mail address of your \(accountsFeature.composer.appName) account?"
            return .ok(.init(body: .html(try page("confirm-email", ["title": "Confirm your e-mail address", "prompt": prompt, "token": token]))))
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try linkProblem(problem))))
        }
    }

    func submitEmailVerificationPage(_ input: Operations.SubmitEmailVerificationPage.Input) async throws -> Operations.SubmitEmailVerificationPage.Output {
        do {
            guard case .urlEncodedForm(let form)? = input.body else { throw AccountTokens.missing }
            let redeemed = try await accountsFeature.credentials.verifyEmail(token: try Self.present(form.token), now: clock.now)
            let message = redeemed.purpose == .changeEmail
                ? "Your account's e-mail address is now \(redeemed.email). You can close this page."
                : "\(redeemed.email) is verified. You can close this page and go back to the app."
            return .ok(.init(body: .html(try page("message", ["title": "E-mail address confirmed", "message": message]))))
        } catch let problem as Problem where problem.status == .conflict {
            return .conflict(.init(body: .html(try linkProblem(problem))))
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try linkProblem(problem))))
        }
    }

    func getPasswordResetPage(_ input: Operations.GetPasswordResetPage.Input) async throws -> Operations.GetPasswordResetPage.Output {
        do {
            let token = try Self.present(input.query.token)
            let email = try await accountsFeature.credentials.checkResetToken(token, now: clock.now)
            return .ok(.init(body: .html(try resetForm(token: token, email: email, error: nil))))
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try linkProblem(problem))))
        }
    }

    func submitPasswordResetPage(_ input: Operations.SubmitPasswordResetPage.Input) async throws -> Operations.SubmitPasswordResetPage.Output {
        let now = clock.now
        let form: Components.Schemas.PasswordResetForm
        let token: String
        let email: String
        do {
            guard case .urlEncodedForm(let body)? = input.body else { throw AccountTokens.missing }
            form = body
            token = try Self.present(form.token)
            email = try await accountsFeature.credentials.checkResetToken(token, now: now)
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try linkProblem(problem))))
        }
        guard let newPassword = form.newPassword, !newPassword.isEmpty else {
            return .badRequest(.init(body: .html(try resetForm(token: token, email: email, error: "Type a new password."))))
        }
        if let confirmation = form.confirmPassword, confirmation != newPassword {
            return .badRequest(.init(body: .html(try resetForm(token: token, email: email, error: "The two passwords differ."))))
        }
        do {
            try await accountsFeature.credentials.resetPassword(token: token, newPassword: newPassword, now: now)
        } catch let problem as Problem where problem.code == .validationFailed {
            let reason = problem.fieldErrors.map { "The password \($0.message)." }.joined(separator: " ")
            return .badRequest(.init(body: .html(try resetForm(token: token, email: email, error: reason))))
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try linkProblem(problem))))
        }
        let message = "The password of \(email) is set, and every device was signed out. Sign in with the new password in the app."
        return .ok(.init(body: .html(try page("message", ["title": "Password changed", "message": message]))))
    }

    /// The token of a link or form; a missing or empty one is refused like an unknown one.
    private static func present(_ token: String?) throws(Problem) -> String {
        guard let token, !token.isEmpty else { throw AccountTokens.missing }
        return token
    }

    private func resetForm(token: String, email: String, error: String?) throws -> HTTPBody {
        var values: [String: Any] = ["title": "Choose a new password", "token": token, "email": email]
        if let error { values["error"] = error }
        return try page("reset-form", values)
    }

    private func linkProblem(_ problem: Problem) throws -> HTTPBody {
        try page("message", ["title": "This link cannot be used", "message": problem.detail ?? problem.title, "isError": true])
    }

    private func page(_ name: String, _ values: [String: Any]) throws -> HTTPBody {
        HTTPBody(try accountsFeature.composer.page(name, values))
    }
}

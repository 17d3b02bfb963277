import FitBaseCore
import FitBaseAPI
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime

/// The small pages e-mailed links open in a browser: `/auth/verify` (proves an address) and `/auth/reset` (a form
/// for a new password). They redeem tokens through the same ``AccountCredentials`` as the JSON endpoints.
struct AccountPagesController: Sendable {
    let credentials: AccountCredentials
    let composer: AccountMailComposer

    func getEmailVerificationPage(_ input: Operations.GetEmailVerificationPage.Input) async throws -> Operations.GetEmailVerificationPage.Output {
        do {
            let redeemed = try await credentials.verifyEmail(token: input.query.token, now: .storageNow)
            let message = redeemed.purpose == .changeEmail
                ? "Your account's e-mail address is now \(redeemed.email). You can close this page."
                : "\(redeemed.email) is verified. You can close this page and go back to the app."
            return .ok(.init(body: .html(try page("message", ["title": "E-mail address confirmed", "message": message]))))
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try page("message", ["title": "This link cannot be used", "message": problem.detail ?? problem.title, "isError": true]))))
        }
    }

    func getPasswordResetPage(_ input: Operations.GetPasswordResetPage.Input) async throws -> Operations.GetPasswordResetPage.Output {
        do {
            let email = try await credentials.checkResetToken(input.query.token, now: .storageNow)
            return .ok(.init(body: .html(try resetForm(token: input.query.token, email: email, error: nil))))
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try linkProblem(problem))))
        }
    }

    func submitPasswordResetPage(_ input: Operations.SubmitPasswordResetPage.Input) async throws -> Operations.SubmitPasswordResetPage.Output {
        guard case .urlEncodedForm(let form) = input.body else { throw Problem.invalidRequest("Expected a form.") }
        let now = Date.storageNow
        let email: String
        do {
            email = try await credentials.checkResetToken(form.token, now: now)
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try linkProblem(problem))))
        }
        if let confirmation = form.confirmPassword, confirmation != form.newPassword {
            return .badRequest(.init(body: .html(try resetForm(token: form.token, email: email, error: "The two passwords differ."))))
        }
        do {
            try await credentials.resetPassword(token: form.token, newPassword: form.newPassword, now: now)
        } catch let problem as Problem where problem.code == .validationFailed {
            let reason = problem.fieldErrors.map { "The password \($0.message)." }.joined(separator: " ")
            return .badRequest(.init(body: .html(try resetForm(token: form.token, email: email, error: reason))))
        } catch let problem as Problem where problem.status.kind == .clientError {
            return .badRequest(.init(body: .html(try linkProblem(problem))))
        }
        let message = "The password of \(email) is set, and every device was signed out. Sign in with the new password in the app."
        return .ok(.init(body: .html(try page("message", ["title": "Password changed", "message": message]))))
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
        HTTPBody(try composer.page(name, values))
    }
}

/// Headers of the pages under `/auth/`: never cached, never framed, no referrer (their URLs hold tokens), no scripts.
struct AccountPageHeadersMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext

    /// The routes it wraps: the account pages under `/auth/`.
    static func applies(path: String, method: HTTPRequest.Method) -> Bool {
        path.hasPrefix("/auth/")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.cacheControl] = "no-store"
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        if response.headers[.contentType]?.hasPrefix("text/html") == true { response.headers[.contentType] = "text/html; charset=utf-8" }
        return response
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xFrameOptions = Self("X-Frame-Options")!
}

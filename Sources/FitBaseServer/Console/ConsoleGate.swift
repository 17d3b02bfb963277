import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The console's door: the sign-in page and its form, sign-out, and the checks every other console route runs behind —
/// a live console session (else the sign-in page), the admin role (else 403), and on every POST the session's CSRF
/// token (else 403, nothing done).
extension ConsoleFeature {
    /// The session cookie: `HttpOnly`, `SameSite=Strict`, `Path=/console`, `Secure` when the request came over https.
    static let sessionCookie = "fitbase_console"
    /// The sign-in form's CSRF token (there is no session yet): the form carries the same value as this cookie.
    static let signInCookie = "fitbase_console_signin"
    /// The largest form the console reads (a catalog file included).
    static let maximumFormBytes = 4 << 20

    /// The catalog import's form may be as large as ``maximumFormBytes``, past the API's body limit.
    static let bodyLimits: [BodyLimitMiddleware.Exception] = [
        .init(maxBytes: maximumFormBytes) { method, path in method == .post && path == "/console/catalog/import" }
    ]

    typealias PageHandler = @Sendable (Request, FitBaseRequestContext, ConsoleAdmin) async throws -> Response
    typealias ActionHandler = @Sendable (Request, FitBaseRequestContext, ConsoleAdmin, ConsoleForm) async throws -> Response

    /// A page for administrators only.
    func page(_ handler: @escaping PageHandler) -> @Sendable (Request, FitBaseRequestContext) async throws -> Response {
        { request, context in
            switch try await admitted(request) {
            case .success(let admin): return try await answering(admin) { try await handler(request, context, admin) }
            case .failure(let refusal): return refusal.response
            }
        }
    }

    /// A form's target for administrators only, refused unless it carries the session's CSRF token.
    func action(_ handler: @escaping ActionHandler) -> @Sendable (Request, FitBaseRequestContext) async throws -> Response {
        { request, context in
            switch try await admitted(request) {
            case .failure(let refusal): return refusal.response
            case .success(let admin):
                let form = try await Self.form(of: request)
                guard tokensMatch(form["csrf"], admin.csrfToken) else {
                    return try renderer.page(
                        "message", title: "Form refused", admin: admin, status: .forbidden,
                        ["message": "This form's security token is missing or out of date, so nothing was done. Open the page again and resend it.", "isError": true]
                    )
                }
                return try await answering(admin) { try await handler(request, context, admin, form) }
            }
        }
    }

    /// Why a request does not reach a console page.
    struct Refusal: Error {
        let response: Response
    }

    private func admitted(_ request: Request) async throws -> Result<ConsoleAdmin, Refusal> {
        guard let token = Self.cookie(Self.sessionCookie, in: request) else { return .failure(Refusal(response: ConsoleRenderer.redirect("/console/signin"))) }
        switch try await sessions.lookUp(token: token, now: clock.now) {
        case .admin(let admin): return .success(admin)
        case .none: return .failure(Refusal(response: ConsoleRenderer.redirect("/console/signin")))
        case .notAdmin: return .failure(Refusal(response: try notAdminPage()))
        }
    }

    /// Runs a page; a problem it throws (not found, a conflict, a validation error) becomes a page saying so with its
    /// status, anything else a logged 500 page that tells nothing of the server.
    private func answering(_ admin: ConsoleAdmin, _ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let problem as Problem {
            return try problemPage(problem, admin)
        } catch let convertible as any ProblemConvertible {
            return try problemPage(convertible.problem, admin)
        } catch {
            logger.error("console page failed", metadata: ["error": .string(String(reflecting: error))])
            return try renderer.page("message", title: "Something went wrong", admin: admin, status: .internalServerError, ["message": "The page could not be made; the server's log has the details.", "isError": true])
        }
    }

    /// A problem as a page: its status, its detail, and each field it names with what is wrong with it.
    private func problemPage(_ problem: Problem, _ admin: ConsoleAdmin) throws -> Response {
        try renderer.page("message", title: problem.title, admin: admin, status: problem.status, [
            "message": problem.detail ?? problem.title, "isError": true,
            "errors": problem.fieldErrors.map { ["field": $0.field, "message": $0.message] },
        ])
    }

    private func notAdminPage() throws -> Response {
        try renderer.page(
            "message", title: "Administrators only", admin: nil, status: .forbidden,
            ["message": "This account is not an administrator. The console is for administrators only.", "isError": true, "signInAgain": true]
        )
    }

    // MARK: Sign-in and sign-out

    func signInPage(_ request: Request, error: String? = nil, status: HTTPResponse.Status = .ok, email: String? = nil) throws -> Response {
        let token = Self.cookie(Self.signInCookie, in: request) ?? randomToken()
        var values: [String: Any] = ["signInToken": token]
        if let error { values["error"] = error }
        if let email { values["email"] = email }
        var response = try renderer.page("signin", title: "Sign in", admin: nil, status: status, values)
        response.headers.append(HTTPField(name: .setCookie, value: Self.cookieHeader(Self.signInCookie, token, request: request, maxAge: 3600)))
        return response
    }

    /// The sign-in form: the same throttle and password check as `POST /v1/auth/signin`; an administrator gets a console
    /// session, anyone else a 403 and no session.
    func signIn(_ request: Request) async throws -> Response {
        let form = try await Self.form(of: request)
        guard let expected = Self.cookie(Self.signInCookie, in: request), tokensMatch(form["csrf"], expected) else {
            return try signInPage(request, error: "The sign-in form expired; sign in again.", status: .forbidden)
        }
        let email = form["email"] ?? ""
        let now = clock.now
        let checked: (user: UserRecord, attempt: SignInThrottle.Attempt)
        do {
            checked = try await accounts.checkPassword(email: email, password: form["password"] ?? "", deviceToken: nil, client: RequestScope.current.clientAddress, now: now)
        } catch let problem as Problem where problem.status == .unauthorized || problem.status == .tooManyRequests {
            var response = try signInPage(request, error: problem.detail ?? problem.title, status: problem.status, email: email)
            if let retry = problem.headers[.retryAfter] { response.headers[.retryAfter] = retry }
            return response
        }
        let user = checked.user
        let opened: (token: String, admin: ConsoleAdmin)? = try await database.transaction { [accounts] db in
            // The password was right: the throttle forgets the attempt either way, as for the API.
            _ = try await accounts.throttle.succeeded(checked.attempt, presentedToken: nil, user: user.id, now: now, on: db)
            guard user.role == .admin else { return nil }
            let opened = try await ConsoleSessionStore.open(for: user, now: now, on: db)
            try await OperatorAuditTrail.record(.signIn, by: opened.admin, target: "console-session", opened.admin.session.uuidString.lowercased(), now: now, on: db)
            return opened
        }
        guard let opened else { return try notAdminPage() }
        return ConsoleRenderer.redirect("/console", cookies: [
            Self.cookieHeader(Self.sessionCookie, opened.token, request: request, maxAge: Int(ConsoleSessionStore.lifetime)),
            Self.cookieHeader(Self.signInCookie, "", request: request, maxAge: 0),
        ])
    }

    func signOut(_ admin: ConsoleAdmin) async throws -> Response {
        let now = clock.now
        try await database.transaction { db in
            try await ConsoleSessionStore.end(admin.session, now: now, on: db)
            try await OperatorAuditTrail.record(.signOut, by: admin, target: "console-session", admin.session.uuidString.lowercased(), now: now, on: db)
        }
        return ConsoleRenderer.redirect("/console/signin", cookies: ["\(Self.sessionCookie)=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict"])
    }

    // MARK: Requests

    static func form(of request: Request) async throws -> ConsoleForm {
        var request = request
        let body = try await request.collectBody(upTo: maximumFormBytes)
        return ConsoleForm(body: body, contentType: request.headers[.contentType])
    }

    static func cookie(_ name: String, in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    let value = parts[1].trimmingCharacters(in: .whitespaces)
                    return value.isEmpty ? nil : value
                }
            }
        }
        return nil
    }

    /// A `Set-Cookie` value: `Secure` when the request came over https (a proxy says so with `X-Forwarded-Proto` or
    /// `Forwarded: proto=https`).
    static func cookieHeader(_ name: String, _ value: String, request: Request, maxAge: Int) -> String {
        var header = "\(name)=\(value); Path=/console; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
        if cameOverHTTPS(request) { header += "; Secure" }
        return header
    }

    static func cameOverHTTPS(_ request: Request) -> Bool {
        if request.head.scheme == "https" { return true }
        if request.headers[.xForwardedProto]?.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() == "https" { return true }
        return request.headers[.forwarded]?.lowercased().contains("proto=https") == true
    }

    /// The `:name` path parameter.
    static func parameter(_ name: String, _ context: FitBaseRequestContext) -> String {
        context.parameters.get(name) ?? ""
    }
}

extension HTTPField.Name {
    static let xForwardedProto = Self("X-Forwarded-Proto")!
    static let forwarded = Self("Forwarded")!
}

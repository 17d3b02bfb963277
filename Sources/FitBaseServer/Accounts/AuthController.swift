import FitBaseAPI
import FitBaseCore
import Foundation
import SQLKit

/// Sign-up, sign-in, session rotation and sign-out, and the key set that verifies access tokens.
struct AuthController: Sendable {
    let database: Database
    let users: UserStore
    let sessions: SessionStore
    let throttle: SignInThrottle
    let hasher: PasswordHasher
    let signer: SessionTokenSigner
    let responses: AuthSessionBuilder
    let credentials: AccountCredentials

    func getJWKS(_ input: Operations.GetJWKS.Input) async throws -> Operations.GetJWKS.Output {
        .ok(.init(body: .json(.init(keys: await signer.publishedKeys()))))
    }

    func signUp(_ input: Operations.SignUp.Input) async throws -> Operations.SignUp.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let email = EmailAddress(body.email)
        var errors: [Problem.FieldError] = []
        if email == nil { errors.append(.init(field: "email", message: "is not a valid e-mail address")) }
        errors += PasswordPolicy.violations(of: body.password, email: email).map { .init(field: "password", message: $0.message) }
        let displayName = body.displayName?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let displayName, displayName.count > 100 { errors.append(.init(field: "displayName", message: "must be at most 100 characters")) }
        guard let email, errors.isEmpty else { throw Problem.validationFailed(errors) }
        // Checked before hashing so a taken address costs no bcrypt round; the unique index settles races.
        if try await users.find(email: email) != nil { throw UserStore.emailTaken }
        try await credentials.admitSignUp(email, client: RequestScope.current.clientAddress, now: .storageNow)

        let passwordHash = try await hasher.hash(body.password)
        let now = Date.storageNow
        let user = UserRecord(
            id: UserID(), email: email.value, passwordHash: passwordHash,
            displayName: displayName?.isEmpty == false ? displayName : nil, role: .user, createdAt: now, updatedAt: now,
            lastSignInAt: now
        )
        let deviceLabel = Self.deviceLabel(body.deviceName)
        let (session, refreshToken, deviceToken) = try await database.transaction { [sessions, credentials] db in
            try await UserStore.insert(user, on: db)
            try await credentials.queueVerification(for: user, email: email.value, now: now, on: db)
            let (session, refreshToken) = try await sessions.start(user: user.id, deviceLabel: deviceLabel, now: now, on: db)
            return (session, refreshToken, try await SignInThrottle.trustDevice(of: user.id, now: now, on: db))
        }
        var answer = try await responses.authSession(user, session: session, refreshToken: refreshToken, authenticatedAt: now, now: now)
        answer.deviceToken = deviceToken
        return .created(.init(body: .json(answer)))
    }

    func signIn(_ input: Operations.SignIn.Input) async throws -> Operations.SignIn.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let invalid = Problem.unauthenticated(.invalidCredentials, "The e-mail address or password is wrong.")
        guard let email = EmailAddress(body.email) else { throw invalid }
        let now = Date.storageNow
        let attempt = try await throttle.admit(email, deviceToken: body.deviceToken, client: RequestScope.current.clientAddress, now: now)

        let user = try await users.find(email: email)
        let matches: Bool
        if let user, let hash = user.passwordHash {
            matches = try await hasher.verify(body.password, against: hash)
        } else {
            try await hasher.verifyDecoy(body.password)
            matches = false
        }
        guard var signedIn = user, matches else { throw invalid }
        signedIn.lastSignInAt = now
        let account = signedIn
        let deviceLabel = Self.deviceLabel(body.deviceName)
        let (session, refreshToken, deviceToken) = try await database.transaction { [sessions, throttle] db in
            let deviceToken = try await throttle.succeeded(attempt, presentedToken: body.deviceToken, user: account.id, now: now, on: db)
            let (session, refreshToken) = try await sessions.start(user: account.id, deviceLabel: deviceLabel, now: now, on: db)
            return (session, refreshToken, deviceToken)
        }
        var answer = try await responses.authSession(account, session: session, refreshToken: refreshToken, authenticatedAt: now, now: now)
        answer.deviceToken = deviceToken
        return .ok(.init(body: .json(answer)))
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = Date.storageNow
        switch try await sessions.rotate(body.refreshToken, now: now) {
        case .rotated(let session, let userID, let authenticatedAt, let newToken):
            guard let user = try await users.find(id: userID) else {
                throw Problem.unauthenticated(.invalidRefreshToken, "The refresh token is not valid.")
            }
            return .ok(.init(body: .json(try await responses.authSession(user, session: session, refreshToken: newToken, authenticatedAt: authenticatedAt, now: now))))
        case .reused:
            throw Problem.unauthenticated(
                .refreshTokenReused, "This refresh token was already used; the session has been ended. Sign in again."
            )
        case .invalid:
            throw Problem.unauthenticated(.invalidRefreshToken, "The refresh token is not valid; sign in again.")
        }
    }

    func signOut(_ input: Operations.SignOut.Input) async throws -> Operations.SignOut.Output {
        let caller = try RequestScope.requireCaller()
        _ = try await sessions.revoke(caller.session, of: caller.user, now: .storageNow)
        return .noContent(.init())
    }

    static func deviceLabel(_ name: String?) -> String? {
        guard let name = name?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty else { return nil }
        return String(name.prefix(100))
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation

/// Sign-up, sign-in, session rotation and sign-out, and the key set that verifies access tokens.
protocol AuthOperations: FeatureOperations { var accountsFeature: AccountsFeature { get } }

extension AuthOperations {
    func getJWKS(_ input: Operations.GetJWKS.Input) async throws -> Operations.GetJWKS.Output {
        .ok(.init(body: .json(.init(keys: await accountsFeature.signer.publishedKeys()))))
    }

    func signUp(_ input: Operations.SignUp.Input) async throws -> Operations.SignUp.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let email = EmailAddress(body.email)
        var errors: [Problem.FieldError] = []
        if email == nil { errors.append(.init(field: "email", message: "is not a valid e-mail address")) }
        errors += PasswordPolicy.violations(of: body.password, email: email).map { .init(field: "password", message: $0.message) }
        var displayName: String?
        do throws(InvalidFields) {
            displayName = try body.displayName.flatMap { name throws(InvalidFields) in try DisplayNameRule.checked(name) }
        } catch {
            errors += error.errors.map { .init(field: $0.field, message: $0.message) }
        }
        guard let email, errors.isEmpty else { throw Problem.validationFailed(errors) }
        // The same steps whether or not the address has an account — counted, hashed, one transaction, one e-mail —
        // so neither the answer nor its timing tells which (see ``AccountCredentials/signUp(_:email:now:)``).
        try await accountsFeature.credentials.admitSignUp(email, client: RequestScope.current.clientAddress, now: clock.now)
        let passwordHash = try await accountsFeature.hasher.hash(body.password)
        let now = clock.now
        let user = UserRecord(
            id: ids.make(), email: email.value, passwordHash: passwordHash,
            displayName: displayName, role: .user, createdAt: now, updatedAt: now
        )
        try await accountsFeature.credentials.signUp(user, email: email, now: now)
        return .accepted(.init(body: .json(.init(email: email.value))))
    }

    func signIn(_ input: Operations.SignIn.Input) async throws -> Operations.SignIn.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = clock.now
        let (checked, attempt) = try await accountsFeature.checkPassword(
            email: body.email, password: body.password, deviceToken: body.deviceToken, client: RequestScope.current.clientAddress, now: now
        )
        var account = checked
        account.lastSignInAt = now
        let deviceLabel = AuthSessionBuilder.deviceLabel(body.deviceName)
        let opened = try await accountsFeature.passwordSessions.signIn(account.id, attempt: attempt, presentedToken: body.deviceToken, deviceLabel: deviceLabel, now: now)
        var answer = try await accountsFeature.responses.authSession(account, session: opened.session, refreshToken: opened.refreshToken, authenticatedAt: now, now: now)
        answer.deviceToken = opened.deviceToken
        return .ok(.init(body: .json(answer)))
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = clock.now
        switch try await accountsFeature.sessions.rotate(body.refreshToken, now: now) {
        case .rotated(let session, let userID, let authenticatedAt, let newToken):
            guard let user = try await accountsFeature.users.find(id: userID) else {
                throw Problem.unauthenticated(.invalidRefreshToken, "The refresh token is not valid.")
            }
            return .ok(.init(body: .json(try await accountsFeature.responses.authSession(user, session: session, refreshToken: newToken, authenticatedAt: authenticatedAt, now: now))))
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
        _ = try await accountsFeature.sessions.revoke(caller.session, of: caller.user, now: clock.now)
        return .noContent(.init())
    }
}

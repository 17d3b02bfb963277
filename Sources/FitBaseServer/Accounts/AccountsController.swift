import FitBaseAPI
import FitBaseCore
import Foundation
import SQLKit

/// Sign-up, sign-in, session rotation and the signed-in user's account and sessions.
struct AccountsController: Sendable {
    let database: Database
    let users: UserStore
    let sessions: SessionStore
    let throttle: SignInThrottle
    let hasher: PasswordHasher
    let signer: SessionTokenSigner

    func getJWKS(_ input: Operations.GetJWKS.Input) async throws -> Operations.GetJWKS.Output {
        let (x, y) = signer.publicKeyCoordinates
        let key = Components.Schemas.Jwk(kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: signer.keyID, x: x, y: y)
        return .ok(.init(body: .json(.init(keys: [key]))))
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

        let passwordHash = try await hasher.hash(body.password)
        let now = Date.storageNow
        let user = UserRecord(
            id: UserID(), email: email.value, passwordHash: passwordHash,
            displayName: displayName?.isEmpty == false ? displayName : nil, role: .user, createdAt: now, updatedAt: now
        )
        let deviceLabel = Self.deviceLabel(body.deviceName)
        let (session, refreshToken) = try await database.transaction { [users, sessions] db in
            try await users.insert(user, on: db)
            return try await sessions.start(user: user.id, deviceLabel: deviceLabel, now: now, on: db)
        }
        return .created(.init(body: .json(try await authSession(user, session: session, refreshToken: refreshToken, now: now))))
    }

    func signIn(_ input: Operations.SignIn.Input) async throws -> Operations.SignIn.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let invalid = Problem.unauthenticated("invalid_credentials", "The e-mail address or password is wrong.")
        guard let email = EmailAddress(body.email) else { throw invalid }
        let now = Date.storageNow
        try await throttle.check(email, now: now)

        let user = try await users.find(email: email)
        let matches: Bool
        if let user, let hash = user.passwordHash {
            matches = try await hasher.verify(body.password, against: hash)
        } else {
            try await hasher.verifyDecoy(body.password)
            matches = false
        }
        guard let user, matches else {
            try await throttle.recordFailure(email, now: now)
            throw invalid
        }
        try await throttle.reset(email)
        let deviceLabel = Self.deviceLabel(body.deviceName)
        let (session, refreshToken) = try await database.transaction { [sessions] db in
            try await sessions.start(user: user.id, deviceLabel: deviceLabel, now: now, on: db)
        }
        return .ok(.init(body: .json(try await authSession(user, session: session, refreshToken: refreshToken, now: now))))
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = Date.storageNow
        switch try await sessions.rotate(body.refreshToken, now: now) {
        case .rotated(let session, let userID, let newToken):
            guard let user = try await users.find(id: userID) else {
                throw Problem.unauthenticated("invalid_refresh_token", "The refresh token is not valid.")
            }
            return .ok(.init(body: .json(try await authSession(user, session: session, refreshToken: newToken, now: now))))
        case .reused:
            throw Problem.unauthenticated(
                "refresh_token_reused", "This refresh token was already used; the session has been ended. Sign in again."
            )
        case .invalid:
            throw Problem.unauthenticated("invalid_refresh_token", "The refresh token is not valid; sign in again.")
        }
    }

    func signOut(_ input: Operations.SignOut.Input) async throws -> Operations.SignOut.Output {
        let caller = try RequestScope.requireCaller()
        _ = try await sessions.revoke(caller.session, of: caller.user, now: .storageNow)
        return .noContent(.init())
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let caller = try RequestScope.requireCaller()
        guard let user = try await users.find(id: caller.user) else {
            throw Problem.unauthenticated("session_revoked", "The account no longer exists.")
        }
        return .ok(.init(body: .json(Self.wire(user))))
    }

    func listSessions(_ input: Operations.ListSessions.Input) async throws -> Operations.ListSessions.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let cursor = try input.query.cursor.map(SessionCursor.init(encoded:))
        let page = try await sessions.list(user: caller.user, limit: limit + 1, after: cursor.map { ($0.createdAt, $0.id) })
        let items = page.prefix(limit).map { session in
            Components.Schemas.SessionInfo(
                id: session.id.description, deviceLabel: session.deviceLabel, createdAt: session.createdAt,
                lastUsedAt: session.lastUsedAt, current: session.id == caller.session
            )
        }
        let next = page.count > limit ? page.prefix(limit).last.map { SessionCursor(createdAt: $0.createdAt, id: $0.id).encoded } : nil
        return .ok(.init(body: .json(.init(items: Array(items), nextCursor: next))))
    }

    func deleteSession(_ input: Operations.DeleteSession.Input) async throws -> Operations.DeleteSession.Output {
        let caller = try RequestScope.requireCaller()
        guard let session = SessionID(input.path.sessionId),
            try await sessions.revoke(session, of: caller.user, now: .storageNow)
        else {
            throw Problem.notFound("No live session \(input.path.sessionId) belongs to you.")
        }
        return .noContent(.init())
    }

    // MARK: Wire mapping

    private func authSession(_ user: UserRecord, session: SessionID, refreshToken: String, now: Date) async throws -> Components.Schemas.AuthSession {
        let (accessToken, expiresIn) = try await signer.issue(user: user.id, session: session, now: now)
        return .init(user: Self.wire(user), accessToken: accessToken, refreshToken: refreshToken, expiresIn: expiresIn, tokenType: .bearer)
    }

    static func wire(_ user: UserRecord) -> Components.Schemas.User {
        .init(
            id: user.id.description, email: user.email, displayName: user.displayName,
            role: user.role == .admin ? .admin : .user, createdAt: user.createdAt
        )
    }

    private static func deviceLabel(_ name: String?) -> String? {
        guard let name = name?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty else { return nil }
        return String(name.prefix(100))
    }
}

/// Position in the session list: the last item's creation time and id.
private struct SessionCursor {
    let createdAt: Date
    let id: SessionID

    init(createdAt: Date, id: SessionID) {
        self.createdAt = createdAt
        self.id = id
    }

    init(encoded: String) throws(Problem) {
        let parts = PageRequest.decodeCursor(encoded)?.split(separator: "|")
        guard let parts, parts.count == 2, let seconds = Double(parts[0]), let id = SessionID(String(parts[1])) else {
            throw Problem.invalidRequest("cursor is not a cursor this list returned.", fieldErrors: [.init(field: "cursor", message: "is not valid")])
        }
        self.createdAt = Date(timeIntervalSince1970: seconds)
        self.id = id
    }

    var encoded: String { PageRequest.encodeCursor("\(createdAt.timeIntervalSince1970)|\(id)") }
}

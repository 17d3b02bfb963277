import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import HTTPTypes

/// ``AuthService`` over ``FitBaseClient``'s session. Signing out unregisters the device's push token while the session
/// still works, ends the session on the server, stops syncing and erases the device's store (destroying its key) and the
/// cached entitlement; every new session registers the token again.
public struct LiveAuthService: AuthService {
    let client: FitBaseClient
    let sync: SyncRunner
    let localData: LocalData
    let analyticsConsent: ConsentGatedAnalytics
    let push: LivePushService

    public func currentState() async -> AuthState {
        guard let id = await client.currentUserID() else { return .signedOut(.notSignedIn) }
        return .signedIn(userID: id)
    }

    public func stateUpdates() async -> AsyncStream<AuthState> {
        let states = await client.sessionStates()
        let (stream, continuation) = AsyncStream<AuthState>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let task = Task {
            for await state in states { continuation.yield(AuthState(state)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func signUp(email: String, password: String, displayName: String?) async throws(KitError) -> AccountUser {
        let user = try await kit { () async throws(FitBaseError) in try await client.signUp(email: email, password: password, displayName: displayName) }
        await push.sessionStarted()
        await sync.restart()
        analyticsConsent.begin(user: user.id)
        return AccountUser(user)
    }

    public func signIn(email: String, password: String) async throws(KitError) -> AccountUser {
        let user = try await kit { () async throws(FitBaseError) in try await client.signIn(email: email, password: password) }
        await push.sessionStarted()
        await sync.restart()
        analyticsConsent.begin(user: user.id)
        return AccountUser(user)
    }

    public func signInWithApple(_ credential: AppleCredential) async throws(KitError) -> AccountUser {
        let user = try await kit { () async throws(FitBaseError) in
            try await client.signInWithApple(
                identityToken: credential.identityToken, rawNonce: credential.rawNonce, authorizationCode: credential.authorizationCode,
                givenName: credential.givenName, familyName: credential.familyName
            )
        }
        await push.sessionStarted()
        await sync.restart()
        analyticsConsent.begin(user: user.id)
        return AccountUser(user)
    }

    public func signInWithGoogle(idToken: String, nonce: String?) async throws(KitError) -> AccountUser {
        let user = try await kit { () async throws(FitBaseError) in try await client.signInWithGoogle(idToken: idToken, nonce: nonce) }
        await push.sessionStarted()
        await sync.restart()
        analyticsConsent.begin(user: user.id)
        return AccountUser(user)
    }

    public func signOut() async {
        await push.sessionEnding()
        await sync.stop()
        try? await client.signOut()
        await localData.erase()
    }

    public func requestPasswordReset(email: String) async throws(KitError) {
        try await kit { () async throws(FitBaseError) in try await client.requestPasswordReset(email: email) }
    }

    public func resetPassword(token: String, newPassword: String) async throws(KitError) {
        try await kit { () async throws(FitBaseError) in try await client.resetPassword(token: token, newPassword: newPassword) }
    }

    public func verifyEmail(token: String) async throws(KitError) -> VerifiedEmail {
        let result = try await kit { () async throws(FitBaseError) in try await client.verifyEmail(token: token) }
        return VerifiedEmail(email: result.email, changedAddress: result.purpose == .changeEmail)
    }

    public func resendVerification() async throws(KitError) {
        try await kit { () async throws(FitBaseError) in try await client.resendVerification() }
    }
}

/// What the device keeps of the signed-in user: the store and the cached entitlement.
struct LocalData: Sendable {
    let store: LocalStore
    let entitlementCache: URL?

    /// Empties the store (destroying its key) and removes the cached entitlement.
    func erase() async {
        try? await store.erase()
        if let entitlementCache { try? FileManager.default.removeItem(at: entitlementCache) }
    }
}

extension AuthState {
    init(_ state: SessionState) {
        switch state {
        case .signedIn(let id): self = .signedIn(userID: id)
        case .signedOut(let end): self = .signedOut(end)
        }
    }
}

extension AccountUser {
    init(_ user: SignedInUser) {
        self.init(id: user.id, email: user.email, displayName: user.displayName, emailVerified: user.emailVerified, isNewUser: user.isNewUser)
    }
}

/// Runs an SDK call, turning its failure into a ``KitError``.
func kit<T>(_ operation: () async throws(FitBaseError) -> T) async throws(KitError) -> T {
    do {
        return try await operation()
    } catch {
        throw Task.isCancelled ? .cancelled : KitError(error)
    }
}

/// ``ProfileService`` over `/v1/me`. Deleting the account signs in again with the given proof (the server wants a
/// sign-in within 5 minutes), deletes, then erases the device's store and its key.
public struct LiveProfileService: ProfileService {
    let client: FitBaseClient
    let sync: SyncRunner
    let localData: LocalData
    /// Told the user's `analytics` answer whenever the consents are read or one is recorded.
    let analyticsConsent: ConsentGatedAnalytics
    let push: LivePushService

    public func profile() async throws(KitError) -> UserProfile {
        try await kit { () async throws(FitBaseError) in
            switch try await client.call({ try await client.api.getMe() }) {
            case .ok(let ok): return try UserProfile(wire: try FitBaseError.decoding { try ok.body.json })
            case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
            case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
            case .default(let code, let response): throw .from(statusCode: code, problem: try? response.body.applicationProblemJson)
            }
        }
    }

    public func saveProfile(_ profile: Profile) async throws(KitError) -> UserProfile {
        try await update(profile.wireUpdate)
    }

    public func setShareWorkoutData(_ share: Bool) async throws(KitError) -> UserProfile {
        try await update(Components.Schemas.UserUpdate(privacy: .init(shareWorkoutData: share)))
    }

    private func update(_ body: Components.Schemas.UserUpdate) async throws(KitError) -> UserProfile {
        try await kit { () async throws(FitBaseError) in
            switch try await client.call({ try await client.api.updateMe(body: .json(body)) }) {
            case .ok(let ok): return try UserProfile(wire: try FitBaseError.decoding { try ok.body.json })
            case .badRequest(let response): throw .from(statusCode: 400, problem: try? response.body.applicationProblemJson)
            case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
            case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
            case .default(let code, let response): throw .from(statusCode: code, problem: try? response.body.applicationProblemJson)
            }
        }
    }

    public func consents() async throws(KitError) -> [ConsentRecord] {
        let mark = analyticsConsent.mark()
        return try await kit { () async throws(FitBaseError) in
            switch try await client.call({ try await client.api.listConsents() }) {
            case .ok(let ok):
                let consents = try FitBaseError.decoding { try ok.body.json }.items.map(ConsentRecord.init(wire:))
                analyticsConsent.decide(from: consents, since: mark)
                return consents
            case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
            case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
            case .default(let code, let response): throw .from(statusCode: code, problem: try? response.body.applicationProblemJson)
            }
        }
    }

    public func recordConsent(_ kind: ConsentKind, version: String, granted: Bool) async throws(KitError) -> ConsentRecord {
        try await kit { () async throws(FitBaseError) in
            let body = Components.Schemas.ConsentRequest(kind: kind, version: version, granted: granted)
            switch try await client.call({ try await client.api.recordConsent(body: .json(body)) }) {
            case .created(let created):
                let consent = ConsentRecord(wire: try FitBaseError.decoding { try created.body.json })
                if consent.kind == .analytics { analyticsConsent.decide(consent.granted) }
                return consent
            case .badRequest(let response): throw .from(statusCode: 400, problem: try? response.body.applicationProblemJson)
            case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
            case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
            case .default(let code, let response): throw .from(statusCode: code, problem: try? response.body.applicationProblemJson)
            }
        }
    }

    public func exportData() async throws(KitError) -> AccountExport {
        try await kit { () async throws(FitBaseError) in
            switch try await client.call({ try await client.api.exportMe() }) {
            case .ok(let ok):
                let export = try FitBaseError.decoding { try ok.body.json }
                let json = try FitBaseError.decoding { try WireCoding.encoder.encode(export) }
                let day = String(InternetDateTime.string(from: export.exportedAt).prefix(10))
                return AccountExport(exportedAt: export.exportedAt, json: json, suggestedFileName: "fitbase-export-\(day).json")
            case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
            case .tooManyRequests(let response): throw .from(statusCode: 429, problem: try? response.body.applicationProblemJson)
            case .default(let code, let response): throw .from(statusCode: code, problem: try? response.body.applicationProblemJson)
            }
        }
    }

    public func changePassword(current: String, new: String) async throws(KitError) {
        try await kit { () async throws(FitBaseError) in try await client.changePassword(current: current, new: new) }
    }

    public func deleteAccount(_ reauthentication: Reauthentication) async throws(KitError) {
        guard let signedIn = await client.currentUserID() else { throw .notSignedIn }
        let email = try await profile().email
        let proven = try await kit { () async throws(FitBaseError) in
            switch reauthentication {
            case .password(let password):
                guard let email else { throw .notSignedIn }
                return try await client.signIn(email: email, password: password)
            case .apple(let credential):
                return try await client.signInWithApple(
                    identityToken: credential.identityToken, rawNonce: credential.rawNonce, authorizationCode: credential.authorizationCode)
            case .google(let idToken, let nonce):
                return try await client.signInWithGoogle(idToken: idToken, nonce: nonce)
            }
        }
        // Proof for another account must never delete that one: the session is now theirs, so end it.
        guard proven.id == signedIn else {
            try? await client.signOut()
            throw KitError(.invalidCredentials, message: "That sign-in belongs to another account.")
        }
        try await kit { () async throws(FitBaseError) in try await client.deleteAccount() }
        await sync.stop()
        await push.accountDeleted()
        await localData.erase()
    }
}

extension LiveProfileService {
    public func sessions() async throws(KitError) -> [SignedInSession] {
        var sessions: [SignedInSession] = []
        var cursor: String?
        // A session per signed-in device: a handful; the pages are followed to the end, at most 10 of 100.
        for _ in 0..<10 {
            var query = [URLQueryItem(name: "limit", value: "100")]
            if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
            let page = try await api.get(Components.Schemas.SessionPage.self, "/v1/me/sessions", query: query, operationID: "listSessions")
            for session in page.items {
                sessions.append(SignedInSession(
                    id: try SessionID(wire: session.id), deviceLabel: session.deviceLabel, createdAt: session.createdAt, lastUsedAt: session.lastUsedAt,
                    isCurrent: session.current))
            }
            guard let next = page.nextCursor else { break }
            cursor = next
        }
        return sessions
    }

    public func endSession(id: SessionID) async throws(KitError) {
        try await api.send(.delete, "/v1/me/sessions/\(id)", operationID: "deleteSession")
    }

    public func auditLog(page: PageRequest) async throws(KitError) -> Page<AuditRecord> {
        var query = [URLQueryItem(name: "limit", value: String(page.limit))]
        if let cursor = page.cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
        let body = try await api.get(Components.Schemas.AuditEntryPage.self, "/v1/me/audit", query: query, operationID: "listMyAuditEntries")
        var records: [AuditRecord] = []
        for entry in body.items {
            records.append(AuditRecord(
                sequence: entry.seq, at: entry.at, actor: try entry.actorId.map { text throws(KitError) in try UserID(wire: text) }, rawAction: entry.action,
                rawResource: entry.resource, count: entry.count, outcome: AuditOutcome(rawValue: entry.outcome)))
        }
        return Page(items: records, nextCursor: body.nextCursor)
    }

    private var api: ServerAPI { ServerAPI(client: client) }
}

extension ConsentRecord {
    init(wire consent: Components.Schemas.Consent) {
        self.init(kind: consent.kind, version: consent.version, granted: consent.granted, recordedAt: consent.recordedAt)
    }
}

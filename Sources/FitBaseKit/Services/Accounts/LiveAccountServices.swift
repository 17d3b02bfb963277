import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import HTTPTypes

/// ``AuthService`` over ``FitBaseClient``'s session. Signing out unregisters the device's push token while the session
/// still works, ends the session on the server, stops syncing and erases the device's store (destroying its key) and the
/// cached entitlement; every new session registers the token again. Sign in with Apple and Google go through the
/// providers the app was given (``AppleSignInProvider``, ``GoogleSignInProvider``), with a nonce made here.
public struct LiveAuthService: AuthService {
    let client: FitBaseClient
    let sync: SyncRunner
    let localData: LocalData
    let analyticsConsent: ConsentGatedAnalytics
    let push: LivePushService
    /// Apple's sheet on this device (`ASAuthorizationController`); `nil` when the app does not offer Sign in with Apple.
    var appleSignIn: (any AppleSignInProvider)? = nil
    /// Google's SDK as the app fills it in; `nil` when the app does not offer Google sign-in.
    var googleSignIn: (any GoogleSignInProvider)? = nil

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

    public func signUp(email: String, password: String, displayName: String?) async throws(KitError) -> SignedInUser {
        let user = try await kit { () async throws(FitBaseError) in
            try await client.signUp(email: email, password: password, displayName: displayName)
        }
        return await started(user)
    }

    public func signIn(email: String, password: String) async throws(KitError) -> SignedInUser {
        let user = try await kit { () async throws(FitBaseError) in try await client.signIn(email: email, password: password) }
        return await started(user)
    }

    public func signInWithApple() async throws(KitError) -> SignedInUser {
        guard let appleSignIn else { throw .providerNotConfigured("Sign in with Apple") }
        let nonce = try await kit { () async throws(FitBaseError) in try SignInNonce() }
        let apple = try await appleSignIn.requestCredential(hashedNonce: nonce.sha256)
        let user = try await kit { () async throws(FitBaseError) in
            try await client.signInWithApple(
                identityToken: apple.identityToken, rawNonce: nonce.raw, authorizationCode: apple.authorizationCode,
                givenName: apple.givenName, familyName: apple.familyName, appleUserIdentifier: apple.userIdentifier
            )
        }
        return await started(user)
    }

    public func signInWithGoogle() async throws(KitError) -> SignedInUser {
        guard let googleSignIn else { throw .providerNotConfigured("Google sign-in") }
        let nonce = try await kit { () async throws(FitBaseError) in try SignInNonce() }
        let idToken = try await googleSignIn.idToken(nonce: nonce.raw)
        let user = try await kit { () async throws(FitBaseError) in try await client.signInWithGoogle(idToken: idToken, nonce: nonce.raw) }
        return await started(user)
    }

    public func checkProviderCredentials() async {
        guard let appleSignIn, let appleUser = await client.appleUserIdentifier() else { return }
        switch await appleSignIn.credentialState(forUserID: appleUser) {
        case .authorized, .unknown:
            return
        case .revoked, .notFound, .transferred:
            // Only the session Apple was asked about: another sign-in may have replaced it meanwhile.
            guard await client.appleUserIdentifier() == appleUser else { return }
            await end(.appleIDRevoked)
        }
    }

    /// What every new session starts: the push token's registration, syncing, and the analytics consent's reading.
    private func started(_ user: SignedInUser) async -> SignedInUser {
        await push.sessionStarted()
        await sync.restart()
        analyticsConsent.begin(user: user.id)
        return user
    }

    public func signOut() async {
        await end(.signedOut)
    }

    /// Ends the session for `reason`: the push token first (while the session still works), then syncing, the
    /// session, and the device's copy of the user's data.
    private func end(_ reason: SessionEnd) async {
        await push.sessionEnding()
        await sync.stop()
        try? await client.signOut(reason: reason)
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

/// Runs an SDK call, turning its failure into a ``KitError``.
func kit<T>(_ operation: () async throws(FitBaseError) -> T) async throws(KitError) -> T {
    do {
        return try await operation()
    } catch {
        throw Task.isCancelled ? .cancelled : KitError(error)
    }
}

/// ``ProfileService`` over the account's operations (``getMe``, ``updateMe``, the consents, the export, the sessions
/// and the audit log). Deleting the account signs in again with the given proof (the server wants a sign-in within 5
/// minutes), deletes, then erases the device's store and its key.
public struct LiveProfileService: ProfileService {
    let client: FitBaseClient
    let sync: SyncRunner
    let localData: LocalData
    /// Told the user's `analytics` answer whenever the consents are read or one is recorded.
    let analyticsConsent: ConsentGatedAnalytics
    let push: LivePushService

    public func profile() async throws(KitError) -> UserProfile {
        try await kit { () async throws(FitBaseError) in
            try UserProfile(wire: try await client.call { try await client.api.getMe().ok.body.json })
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
            try UserProfile(wire: try await client.call { try await client.api.updateMe(body: .json(body)).ok.body.json })
        }
    }

    public func consents() async throws(KitError) -> [ConsentRecord] {
        let mark = analyticsConsent.mark()
        let consents = try await kit { () async throws(FitBaseError) in
            let page = try await client.call { try await client.api.listConsents().ok.body.json }
            return try page.items.map { consent throws(FitBaseError) in try ContractJSON.record(ConsentRecord.self, from: consent) }
        }
        analyticsConsent.decide(from: consents, since: mark)
        return consents
    }

    public func recordConsent(_ kind: ConsentKind, version: String, granted: Bool) async throws(KitError) -> ConsentRecord {
        let consent = try await kit { () async throws(FitBaseError) in
            let body = Components.Schemas.ConsentRequest(kind: kind, version: version, granted: granted)
            let answer = try await client.call { try await client.api.recordConsent(body: .json(body)).created.body.json }
            return try ContractJSON.record(ConsentRecord.self, from: answer)
        }
        if consent.kind == .analytics { analyticsConsent.decide(consent.granted) }
        return consent
    }

    public func exportData(into directory: URL) async throws(KitError) -> AccountExport {
        let savedAt = Date.now
        let file = directory.appendingPathComponent(AccountExport.fileName(savedAt: savedAt))
        let bytes = try await kit { () async throws(FitBaseError) in try await client.exportAccount(to: file) }
        return AccountExport(fileURL: file, bytes: bytes, savedAt: savedAt)
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
        try await kit { () async throws(FitBaseError) in
            var sessions: [SignedInSession] = []
            var cursor: String?
            // A session per signed-in device: a handful; the pages are followed to the end, at most 10 of 100.
            for _ in 0..<10 {
                let query = Operations.ListSessions.Input.Query(limit: 100, cursor: cursor)
                let page = try await client.call { try await client.api.listSessions(query: query).ok.body.json }
                sessions += try page.items.map { item throws(FitBaseError) in try ContractJSON.record(SignedInSession.self, from: item) }
                guard let next = page.nextCursor else { break }
                cursor = next
            }
            return sessions
        }
    }

    public func endSession(id: SessionID) async throws(KitError) {
        try await kit { () async throws(FitBaseError) in
            _ = try await client.call { try await client.api.deleteSession(path: .init(sessionId: id.description)).noContent }
        }
    }

    public func auditLog(page: PageRequest) async throws(KitError) -> Page<AuditRecord> {
        let body = try await kit { () async throws(FitBaseError) in
            try await client.call {
                try await client.api.listMyAuditEntries(query: .init(limit: page.limit, cursor: page.cursor)).ok.body.json
            }
        }
        var records: [AuditRecord] = []
        for entry in body.items {
            records.append(AuditRecord(
                sequence: entry.seq, at: entry.at, actor: try entry.actorId.map { text throws(KitError) in try UserID(wire: text) }, rawAction: entry.action,
                rawResource: entry.resource, count: entry.count, outcome: AuditOutcome(rawValue: entry.outcome)))
        }
        return Page(items: records, nextCursor: body.nextCursor)
    }
}

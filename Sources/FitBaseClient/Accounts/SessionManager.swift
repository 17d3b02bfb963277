import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Holds the signed-in session: hands out a fresh access token, refreshes it (once, however many requests need it at
/// the same moment), and forgets the session when the server ends it.
actor SessionManager {
    private let store: any TokenStore
    /// A client without the authentication middleware, for the refresh call itself.
    private let api: Client
    private var session: StoredSession?
    private var loaded = false
    private var refreshing: Task<StoredSession, any Error>?
    private let observers = ValueStreams<SessionState>()
    /// Why the last session ended, for observers that start watching later.
    private var lastEnd: SessionEnd = .notSignedIn
    private var currentInstallID: String?

    /// Refresh this long before the access token expires, so a request never leaves with a token about to lapse.
    static let expiryMargin: TimeInterval = 30

    init(store: any TokenStore, api: Client) {
        self.store = store
        self.api = api
    }

    /// The current session, loaded from the store on first use.
    func current() async throws -> StoredSession? {
        if !loaded {
            session = try await store.load()
            loaded = true
        }
        return session
    }

    /// This install's id (made and kept on first use; see ``TokenStore/loadInstallID()``).
    func installID() async -> String {
        if let kept = currentInstallID { return kept }
        let made: String
        if let stored = try? await store.loadInstallID(), !stored.isEmpty {
            made = stored
        } else {
            made = UUID().uuidString.lowercased() + UUID().uuidString.lowercased()
            try? await store.saveInstallID(made)
        }
        currentInstallID = made
        return made
    }

    /// The device token kept for password sign-ins on this device.
    func deviceToken() async -> String? {
        try? await store.loadDeviceToken()
    }

    func keepDeviceToken(_ token: String) async throws {
        try await store.saveDeviceToken(token)
    }

    /// Opens `session`, or ends the current one for `reason` when `nil`; observers learn of it.
    func replace(with session: StoredSession?, reason: SessionEnd = .signedOut) async throws {
        refreshing?.cancel()
        refreshing = nil
        let before = self.session?.userID
        self.session = session
        loaded = true
        defer { if before != session?.userID || session == nil { publish(reason: reason) } }
        try await store.save(session)
    }

    /// The state now, then every change, until the stream is dropped.
    func states() async -> AsyncStream<SessionState> {
        let (stream, continuation) = observers.make(buffer: 8)
        let session = try? await current()
        continuation.yield(session.map { .signedIn(userID: $0.userID) } ?? .signedOut(lastEnd))
        return stream
    }

    private func publish(reason: SessionEnd) {
        let state: SessionState
        if let session {
            state = .signedIn(userID: session.userID)
        } else {
            lastEnd = reason
            state = .signedOut(reason)
        }
        observers.send(state)
    }

    /// An access token valid for a while yet (refreshing first when needed), or `nil` when signed out.
    func accessToken() async throws -> String? {
        guard let session = try await current() else { return nil }
        if session.accessTokenExpiresAt.timeIntervalSinceNow > Self.expiryMargin { return session.accessToken }
        return try await refresh(after: session.accessToken).accessToken
    }

    /// Trades the refresh token for new tokens, unless the session has already moved past `rejectedToken`.
    /// Concurrent callers share one refresh: refresh tokens are single use, and a second use ends the session.
    func refresh(after rejectedToken: String) async throws -> StoredSession {
        guard let session = try await current() else { throw FitBaseError.notSignedIn }
        if session.accessToken != rejectedToken, session.accessTokenExpiresAt.timeIntervalSinceNow > Self.expiryMargin { return session }
        if let refreshing { return try await refreshing.value }
        let task = Task { try await self.performRefresh(session) }
        refreshing = task
        defer { refreshing = nil }
        return try await task.value
    }

    private func performRefresh(_ session: StoredSession) async throws -> StoredSession {
        let body: Components.Schemas.AuthSession
        do {
            body = try await api.refreshSession(body: .json(.init(refreshToken: session.refreshToken))).ok.body.json
        } catch {
            let failure = FitBaseError(thrownByCall: error)
            if failure.statusCode == 401 {
                // The refresh token is spent, expired or revoked: the session is over.
                self.session = nil
                publish(reason: .sessionEnded)
                try await store.save(nil)
            }
            throw failure
        }
        var renewed = try StoredSession(body)
        renewed.appleUserIdentifier = session.appleUserIdentifier
        self.session = renewed
        try await store.save(renewed)
        return renewed
    }
}

extension StoredSession {
    /// The session a sign-in or refresh answered with; an answer whose user id is not one is not understood.
    init(_ session: Components.Schemas.AuthSession) throws(FitBaseError) {
        guard let user = UserID(session.user.id) else { throw .unexpectedResponse(statusCode: 200) }
        self.init(
            userID: user, accessToken: session.accessToken, refreshToken: session.refreshToken,
            accessTokenExpiresAt: Date.now.addingTimeInterval(TimeInterval(session.expiresIn))
        )
    }
}

/// Adds the bearer token to every request of a signed-in client and, when the server answers 401, refreshes the
/// session once and sends the request again.
struct AuthenticationMiddleware: ClientMiddleware {
    let session: SessionManager

    /// Operations that must not carry (or refresh) a bearer token: the token endpoints themselves.
    static let tokenOperations: Set<String> = ["signUp", "signIn", "signInWithApple", "signInWithGoogle", "refreshSession"]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard !Self.tokenOperations.contains(operationID), let token = try await session.accessToken() else {
            return try await next(request, body, baseURL)
        }
        var authorized = request
        authorized.headerFields[.authorization] = "Bearer \(token)"
        let (response, responseBody) = try await next(authorized, body, baseURL)
        guard response.status == .unauthorized else { return (response, responseBody) }
        // The access token was refused (expired early, or revoked): refresh once and retry. A refused refresh ends
        // the session and surfaces as the refresh's problem.
        let renewed = try await session.refresh(after: token)
        authorized.headerFields[.authorization] = "Bearer \(renewed.accessToken)"
        return try await next(authorized, body, baseURL)
    }
}

/// Whether a session is open, as ``FitBaseClient/sessionStates()`` reports it.
public enum SessionState: Sendable, Equatable {
    /// A session is open for this user.
    case signedIn(userID: UserID)
    /// No session; why the last one ended.
    case signedOut(SessionEnd)
}

/// Why no session is open.
public enum SessionEnd: String, Sendable, Equatable {
    /// None was opened on this device (or since launch, when signed out earlier).
    case notSignedIn
    /// ``FitBaseClient/signOut()``.
    case signedOut
    /// The server ended it: its refresh token was refused (revoked on another device, a password reset, expired,
    /// reused).
    case sessionEnded
    /// ``FitBaseClient/deleteAccount()``.
    case accountDeleted
    /// Apple no longer vouches for the Apple ID the session was opened with on this device: the user stopped using
    /// Sign in with Apple with the app (Settings › Apple ID), the credential is not on this device, or the app moved to
    /// another team. Sign in again.
    case appleIDRevoked
}

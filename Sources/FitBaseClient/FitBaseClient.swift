import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

#if canImport(OpenAPIURLSession)
import OpenAPIURLSession
#else
import AsyncHTTPClient
import NIOCore
import OpenAPIAsyncHTTPClient
#endif

/// The FitBase SDK's entry point: one instance per server, shared across the app.
///
/// ```swift
/// let fitbase = FitBaseClient(serverURL: URL(string: "http://127.0.0.1:8080")!, tokenStore: KeychainTokenStore())
/// try await fitbase.signIn(email: "ana@example.com", password: "correct horse battery")
/// let status = try await fitbase.serverStatus()
/// ```
///
/// Once signed in, every call through ``api`` carries the access token; an expired token is refreshed (once, however
/// many calls need it together) and the call is sent again. When the server ends the session, the tokens are
/// forgotten and calls fail with the server's problem (`invalid_refresh_token`, `refresh_token_reused`).
public final class FitBaseClient: Sendable {
    /// The server this client talks to.
    public let serverURL: URL
    /// The client generated from the FitBase OpenAPI contract, authenticated as the signed-in user.
    public let api: Client
    let session: SessionManager
    /// What `api` sends its requests over (see ``send(_:operationID:upTo:)``).
    let transport: any ClientTransport

    /// Creates a client for `serverURL` keeping the session in `tokenStore`, over the platform's default transport
    /// (URLSession on Apple platforms, AsyncHTTPClient elsewhere), or over `transport` when given.
    public init(serverURL: URL, tokenStore: any TokenStore = InMemoryTokenStore(), transport: (any ClientTransport)? = nil) {
        let transport = transport ?? Self.defaultTransport()
        self.serverURL = serverURL
        self.transport = transport
        // RFC 3339 dates read and written without ICU (OpenAPIRuntime's default formatter was a tenth of a sync pull).
        let configuration = Configuration(dateTranscoder: InternetDateTimeTranscoder())
        self.session = SessionManager(
            store: tokenStore, api: Client(serverURL: serverURL, configuration: configuration, transport: transport, middlewares: [ProblemAnswers()]))
        self.api = Client(
            serverURL: serverURL, configuration: configuration, transport: transport,
            middlewares: [ProblemAnswers(), AuthenticationMiddleware(session: session), EntityTagHeaders()]
        )
    }

    /// Sends `request` as `api` sends the operation `operationID` — same transport, same authentication (the bearer
    /// token, a refresh and one retry on 401) — and returns the answer with its body collected, for the few answers
    /// the SDK reads and writes itself instead of through the generated coders (a sync push and a pull's pages).
    package func send(_ request: HTTPRequest, body: HTTPBody? = nil, operationID: String, upTo limit: Int) async throws -> (HTTPResponse, Data) {
        let transport = self.transport
        let (response, body) = try await AuthenticationMiddleware(session: session).intercept(
            request, body: body, baseURL: serverURL, operationID: operationID
        ) { request, body, baseURL in
            try await transport.send(request, body: body, baseURL: baseURL, operationID: operationID)
        }
        guard let body else { return (response, Data()) }
        return (response, try await Data(collecting: body, upTo: limit))
    }

    // MARK: Session

    /// Creates an account with e-mail and password and signs in with them. The server answers a sign-up alike
    /// whether or not the address has an account (it e-mails the address's owner instead), so an address someone
    /// else holds fails here as the sign-in's `invalidCredentials`.
    @discardableResult
    public func signUp(email: String, password: String, displayName: String? = nil, deviceName: String? = nil) async throws(FitBaseError) -> SignedInUser {
        _ = try await call { try await self.api.signUp(body: .json(.init(email: email, password: password, displayName: displayName))).accepted }
        return try await signIn(email: email, password: password, deviceName: deviceName)
    }

    /// Signs in with e-mail and password.
    @discardableResult
    public func signIn(email: String, password: String, deviceName: String? = nil) async throws(FitBaseError) -> SignedInUser {
        let deviceToken = await session.deviceToken()
        return try await begin(try await call {
            try await self.api.signIn(body: .json(.init(email: email, password: password, deviceName: deviceName, deviceToken: deviceToken))).ok.body.json
        })
    }

    /// Signs in (or up) with the credential of `ASAuthorizationAppleIDCredential`: its `identityToken` (UTF-8) and
    /// `authorizationCode`, and the raw nonce whose SHA-256 (hex) the request to Apple carried (``SignInNonce``).
    /// `appleUserIdentifier` (the credential's `user`) is kept with the session for ``appleUserIdentifier()``.
    @discardableResult
    public func signInWithApple(
        identityToken: String, rawNonce: String, authorizationCode: String? = nil, givenName: String? = nil, familyName: String? = nil,
        appleUserIdentifier: String? = nil, deviceName: String? = nil
    ) async throws(FitBaseError) -> SignedInUser {
        let name = givenName == nil && familyName == nil ? nil : Components.Schemas.AppleSignInRequest.FullNamePayload(givenName: givenName, familyName: familyName)
        let body = try await call {
            try await self.api.signInWithApple(body: .json(.init(
                identityToken: identityToken, rawNonce: rawNonce, authorizationCode: authorizationCode, fullName: name, deviceName: deviceName
            ))).ok.body.json
        }
        return try await begin(body, appleUserIdentifier: appleUserIdentifier)
    }

    /// Signs in (or up) with a Google ID token (and the nonce the request to Google carried, if any).
    @discardableResult
    public func signInWithGoogle(idToken: String, nonce: String? = nil, deviceName: String? = nil) async throws(FitBaseError) -> SignedInUser {
        try await begin(try await call {
            try await self.api.signInWithGoogle(body: .json(.init(idToken: idToken, nonce: nonce, deviceName: deviceName))).ok.body.json
        })
    }

    /// Ends the session on the server (when reachable) and forgets its tokens here in any case; observers see
    /// `.signedOut(reason)`.
    public func signOut(reason: SessionEnd = .signedOut) async throws(FitBaseError) {
        guard (try? await session.current()) != nil else { return }
        _ = try? await api.signOut()
        do {
            try await session.replace(with: nil, reason: reason)
        } catch {
            throw .storage(String(describing: error))
        }
    }

    /// The signed-in user's id, or `nil` when signed out.
    public func currentUserID() async -> UserID? {
        try? await session.current()?.userID
    }

    /// Apple's id of the user (`ASAuthorizationAppleIDCredential.user`) when the session was opened with Sign in with
    /// Apple: what to ask `ASAuthorizationAppleIDProvider.getCredentialState(forUserID:)` about. `nil` when signed out
    /// or signed in otherwise.
    public func appleUserIdentifier() async -> String? {
        try? await session.current()?.appleUserIdentifier
    }

    /// Whether a session is open now, then every change — sign-in, sign-out, account deletion, and the server ending
    /// the session (its refresh token refused) — until the stream is dropped. What an app's root view follows.
    public func sessionStates() async -> AsyncStream<SessionState> {
        await session.states()
    }

    /// Deletes the signed-in user's account and everything the server keeps of it, then forgets the session
    /// (observers see `.signedOut(.accountDeleted)`). The server wants a recent sign-in: within 5 minutes, else
    /// `.problem` with `reauthenticationRequired` — sign in again first. Erasing the device's ``LocalStore`` is the
    /// caller's (FitBaseKit's profile service does both).
    public func deleteAccount() async throws(FitBaseError) {
        _ = try await call { try await self.api.deleteMe().noContent }
        do {
            try await session.replace(with: nil, reason: .accountDeleted)
        } catch {
            throw .storage(String(describing: error))
        }
    }

    private func begin(_ body: Components.Schemas.AuthSession, appleUserIdentifier: String? = nil) async throws(FitBaseError) -> SignedInUser {
        var opened = try StoredSession(body)
        opened.appleUserIdentifier = appleUserIdentifier
        do {
            try await session.replace(with: opened)
            if let deviceToken = body.deviceToken { try await session.keepDeviceToken(deviceToken) }
        } catch {
            throw .storage(String(describing: error))
        }
        return SignedInUser(
            id: opened.userID, email: body.user.email, displayName: body.user.displayName, emailVerified: body.user.emailVerified,
            isNewUser: body.isNewUser ?? false
        )
    }

    // MARK: Status

    /// Whether the server is alive and whether its database answers.
    public func serverStatus() async throws(FitBaseError) -> ServerStatus {
        _ = try await call { try await self.api.getHealth().ok }
        do throws(FitBaseError) {
            let body = try await call { try await self.api.getReadiness().ok.body.json }
            return ServerStatus(alive: true, ready: true, database: body.database.rawValue)
        } catch where error.statusCode == 503 {
            return ServerStatus(alive: true, ready: false, database: nil)
        }
    }

    /// Runs a generated-client call, turning thrown errors into ``FitBaseError`` (a refused answer, read once by
    /// ``ProblemAnswers``, and an ended session come out as themselves). Read the success inside the closure —
    /// `try await client.call { try await client.api.getMe().ok.body.json }` — so an answer of another shape is an error
    /// of the same type.
    package func call<Output>(_ operation: @Sendable () async throws -> Output) async throws(FitBaseError) -> Output {
        do {
            return try await operation()
        } catch {
            throw FitBaseError(thrownByCall: error)
        }
    }

    /// The platform's transport: URLSession on Apple platforms, a shared AsyncHTTPClient elsewhere (wrap it to add
    /// logging or to simulate a network in tests).
    public static func defaultTransport() -> any ClientTransport {
        #if canImport(OpenAPIURLSession)
        URLSessionTransport()
        #else
        AsyncHTTPClientTransport(configuration: .init(client: sharedHTTPClient, timeout: .seconds(30)))
        #endif
    }

    #if !canImport(OpenAPIURLSession)
    /// One process-wide HTTP client, never shut down (like `HTTPClient.shared`).
    ///
    /// An unreachable server fails at once instead of being retried until the request deadline: the SDK's callers
    /// and its sync engine decide when to try again, and an app offline should learn it immediately.
    private static let sharedHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
    #endif
}

/// The account a sign-in opened a session for.
public struct SignedInUser: Sendable, Equatable, Hashable {
    /// The user's id.
    public var id: UserID
    /// The e-mail address, when the account has one.
    public var email: String?
    /// The name shown to the user and on leaderboards.
    public var displayName: String?
    /// Whether the address is proven (a link sent to it was opened, or Apple or Google vouched for it).
    public var emailVerified: Bool
    /// Apple and Google sign-in: the account was created by this sign-in (show onboarding).
    public var isNewUser: Bool

    /// An account value (the SDK makes these from the server's answers; fakes and previews make their own).
    public init(id: UserID, email: String? = nil, displayName: String? = nil, emailVerified: Bool = false, isNewUser: Bool = false) {
        self.id = id
        self.email = email
        self.displayName = displayName
        self.emailVerified = emailVerified
        self.isNewUser = isNewUser
    }
}

/// What ``FitBaseClient/serverStatus()`` found.
public struct ServerStatus: Sendable, Equatable {
    /// The server process answers HTTP.
    public var alive: Bool
    /// The server's database answers.
    public var ready: Bool
    /// The database engine (`sqlite` or `postgres`) when ready.
    public var database: String?

    /// Creates a status value (the SDK builds these from the server's answers).
    public init(alive: Bool, ready: Bool, database: String?) {
        self.alive = alive
        self.ready = ready
        self.database = database
    }
}

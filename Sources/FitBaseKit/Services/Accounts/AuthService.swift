import FitBaseClient
import FitBaseCore
import Foundation

/// Whether someone is signed in — what the app's root view switches on.
public enum AuthState: Sendable, Equatable {
    /// A session is open for the user with this id.
    case signedIn(userID: UserID)
    /// Nobody is signed in; the reason tells a "you were signed out" banner apart from a plain launch.
    case signedOut(SignOutReason)

    /// The signed-in user's id, `nil` when signed out.
    public var userID: UserID? {
        if case .signedIn(let id) = self { return id }
        return nil
    }
}

/// Why nobody is signed in: the SDK's own reasons (a plain launch, a sign-out, the server ended the session, the account
/// was deleted), so a reason the SDK adds cannot be mistaken for another.
public typealias SignOutReason = SessionEnd

/// What Sign in with Apple's `ASAuthorizationAppleIDCredential` hands the app: the proof an account deletion takes
/// (``Reauthentication/apple(_:)``).
public struct AppleCredential: Sendable, Equatable {
    /// `identityToken`, as UTF-8 text.
    public var identityToken: String
    /// The raw nonce whose SHA-256 (hex) the request to Apple carried.
    public var rawNonce: String
    /// `authorizationCode`, as UTF-8 text (lets the server revoke Apple's token when the account is deleted).
    public var authorizationCode: String?
    /// The given name Apple gives on the first sign-in only.
    public var givenName: String?
    /// The family name Apple gives on the first sign-in only.
    public var familyName: String?

    /// Makes a credential.
    public init(identityToken: String, rawNonce: String, authorizationCode: String? = nil, givenName: String? = nil, familyName: String? = nil) {
        self.identityToken = identityToken
        self.rawNonce = rawNonce
        self.authorizationCode = authorizationCode
        self.givenName = givenName
        self.familyName = familyName
    }
}

/// What an e-mail link the app was opened with proved.
public struct VerifiedEmail: Sendable, Equatable {
    /// The proven address.
    public var email: String
    /// `true` when the link changed the account's address (rather than verifying the current one).
    public var changedAddress: Bool

    /// Makes a result.
    public init(email: String, changedAddress: Bool) {
        self.email = email
        self.changedAddress = changedAddress
    }
}

/// Signing in and out, and the e-mail and password flows (seeds 000, 001, 004: e-mail, Apple, Google).
public protocol AuthService: Sendable {
    /// Whether someone is signed in now.
    func currentState() async -> AuthState
    /// The state now, then every change — including the server ending the session — until the stream is dropped.
    func stateUpdates() async -> AsyncStream<AuthState>
    /// Creates an account with e-mail and password and signs in.
    func signUp(email: String, password: String, displayName: String?) async throws(KitError) -> SignedInUser
    /// Signs in with e-mail and password.
    func signIn(email: String, password: String) async throws(KitError) -> SignedInUser
    /// Signs in (or up) with Sign in with Apple: makes a nonce, shows Apple's sheet with its SHA-256, and sends the
    /// token with the raw nonce, the authorization code and the name. Apple's id of the user is kept with the session
    /// for ``checkProviderCredentials()``. The user closing the sheet throws ``KitError/Kind/cancelled``; an app without
    /// an ``AppleSignInProvider`` fails with ``ProblemCode/providerNotConfigured``.
    func signInWithApple() async throws(KitError) -> SignedInUser
    /// Signs in (or up) with Google: makes a nonce, hands it to Google's SDK (the ``GoogleSignInProvider`` the app
    /// fills in) and sends the ID token with it. Cancelling and a missing provider fail as for Apple.
    func signInWithGoogle() async throws(KitError) -> SignedInUser
    /// Asks Apple whether the Apple ID the session was opened with still signs in to the app, at launch and on each
    /// return to the foreground: revoked, not found or transferred signs out with
    /// ``SessionEnd/appleIDRevoked``; an answer Apple could not give (offline) keeps the session. Does nothing for
    /// other sessions.
    func checkProviderCredentials() async
    /// Signs out: ends the session on the server when reachable, and erases the user's data from the device.
    func signOut() async
    /// E-mails a password-reset link if an account uses the address (the answer is the same either way).
    func requestPasswordReset(email: String) async throws(KitError)
    /// Sets a new password with the token of a reset link; every session ends, sign in again afterwards.
    func resetPassword(token: String, newPassword: String) async throws(KitError)
    /// Redeems the token of a verification or address-change link.
    func verifyEmail(token: String) async throws(KitError) -> VerifiedEmail
    /// E-mails the signed-in user a new verification link.
    func resendVerification() async throws(KitError)
}

extension KitError {
    /// The app has no provider for `method` (see ``FitBaseDependencies``'s live configuration).
    static func providerNotConfigured(_ method: String) -> KitError {
        KitError(.server, message: "\(method) is not set up in this app.", isRetryable: false, code: .providerNotConfigured)
    }
}

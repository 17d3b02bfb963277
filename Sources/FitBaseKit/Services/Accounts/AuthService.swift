import FitBaseClient
import FitBaseCore
import Foundation

/// The account a session is open for.
public struct AccountUser: Sendable, Equatable, Hashable {
    /// The user's id.
    public var id: UserID
    /// The e-mail address, when the account has one.
    public var email: String?
    /// The name shown to the user and on leaderboards.
    public var displayName: String?
    /// Whether the address is proven.
    public var emailVerified: Bool
    /// Apple and Google sign-in: the account was created by this sign-in (show onboarding).
    public var isNewUser: Bool

    /// Makes an account value.
    public init(id: UserID, email: String? = nil, displayName: String? = nil, emailVerified: Bool = false, isNewUser: Bool = false) {
        self.id = id
        self.email = email
        self.displayName = displayName
        self.emailVerified = emailVerified
        self.isNewUser = isNewUser
    }
}

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

/// What Sign in with Apple's `ASAuthorizationAppleIDCredential` hands the app.
public struct AppleCredential: Sendable, Equatable {
    /// `identityToken`, as UTF-8 text.
    public var identityToken: String
    /// The raw nonce whose SHA-256 (hex) the request to Apple carried.
    public var rawNonce: String
    /// `authorizationCode`, as UTF-8 text (lets the server revoke Apple's token when the account is deleted).
    public var authorizationCode: String?
    /// The name Apple gives on the first sign-in only.
    public var givenName: String?
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
    func signUp(email: String, password: String, displayName: String?) async throws(KitError) -> AccountUser
    /// Signs in with e-mail and password.
    func signIn(email: String, password: String) async throws(KitError) -> AccountUser
    /// Signs in (or up) with Sign in with Apple.
    func signInWithApple(_ credential: AppleCredential) async throws(KitError) -> AccountUser
    /// Signs in (or up) with a Google ID token (and the nonce the request carried, if any).
    func signInWithGoogle(idToken: String, nonce: String?) async throws(KitError) -> AccountUser
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

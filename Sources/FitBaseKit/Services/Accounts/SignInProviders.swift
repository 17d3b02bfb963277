import FitBaseCore
import Foundation

/// Sign in with Apple as the device performs it: `ASAuthorizationController` on Apple platforms
/// (``AppleSignInController``), a scripted fake in tests. The auth service makes the nonce; a provider only carries it.
public protocol AppleSignInProvider: Sendable {
    /// Shows Apple's sheet for a request with the full-name and e-mail scopes whose `nonce` is `hashedNonce` (the
    /// SHA-256, hex, of the raw nonce the server will check), and returns Apple's credential. The user closing the
    /// sheet throws ``KitError/Kind/cancelled``.
    func requestCredential(hashedNonce: String) async throws(KitError) -> AppleIDAuthorization

    /// Apple's state of the credential of `userIdentifier` (the `user` of an earlier authorization) for this app:
    /// `ASAuthorizationAppleIDProvider.getCredentialState(forUserID:)`.
    func credentialState(forUserID userIdentifier: String) async -> AppleCredentialState
}

/// What Apple's sheet hands back (`ASAuthorizationAppleIDCredential`), its data already as text.
public struct AppleIDAuthorization: Sendable, Equatable {
    /// Apple's stable id of the user for this team (`user`): what the credential state is asked about.
    public var userIdentifier: String
    /// `identityToken`, as UTF-8 text.
    public var identityToken: String
    /// `authorizationCode`, as UTF-8 text.
    public var authorizationCode: String?
    /// The name, given on the first authorization only.
    public var givenName: String?
    public var familyName: String?

    /// An authorization of the given parts.
    public init(userIdentifier: String, identityToken: String, authorizationCode: String? = nil, givenName: String? = nil, familyName: String? = nil) {
        self.userIdentifier = userIdentifier
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.givenName = givenName
        self.familyName = familyName
    }
}

/// `ASAuthorizationAppleIDProvider.CredentialState`: whether the Apple ID still authorizes this app.
public enum AppleCredentialState: String, Sendable, Equatable {
    /// Still authorized.
    case authorized
    /// The user stopped using Apple ID with this app (Settings › Apple ID › Sign in with Apple): sign out.
    case revoked
    /// No credential for this user on this device: sign out.
    case notFound
    /// The app moved to another team; the user must sign in again.
    case transferred
    /// Apple could not say (offline, an error): keep the session.
    case unknown
}

/// Google Sign-In as the app fills it in with Google's SDK (`GIDSignIn.sharedInstance.signIn(withPresenting:hint:
/// additionalScopes:nonce:)`): the SDK is the app's dependency, not FitBase's.
public protocol GoogleSignInProvider: Sendable {
    /// Shows Google's sign-in with `nonce` in the request and returns the ID token Google issued (its `nonce` claim is
    /// `nonce`). The user closing it throws ``KitError/Kind/cancelled``.
    func idToken(nonce: String) async throws(KitError) -> String
}

import FitBaseCore
import Foundation

/// Sign in with Apple as a test or preview scripts it: each sheet answers with the next scripted ``Answer`` (signing
/// in as Ana when none is left), and Apple's credential state of each user is what the test set (authorized unless
/// told). Its tokens are ``FakeAuthService``'s: `fake:<address>#<hashed nonce>`, so a token carries the nonce it was
/// asked with, as Apple's does.
public actor FakeAppleSignInProvider: AppleSignInProvider {
    /// What the next sheet does.
    public enum Answer: Sendable, Equatable {
        /// The user signs in with the Apple ID of `userIdentifier`, sharing `email` (and the name, on a first sign-in).
        case authorize(userIdentifier: String, email: String, givenName: String? = nil, familyName: String? = nil)
        /// The user closes the sheet.
        case cancel
        /// Apple fails (no network, a broken configuration).
        case fail(KitError)
    }

    private var answers: [Answer]
    private var states: [String: AppleCredentialState] = [:]
    /// The hashed nonces the sheets were shown with, in order.
    public private(set) var hashedNonces: [String] = []
    /// The users whose credential state was asked, in order.
    public private(set) var stateQueries: [String] = []

    /// A provider answering `answers` in order.
    public init(_ answers: [Answer] = []) {
        self.answers = answers
    }

    /// Queues `answers` after those still waiting.
    public func script(_ answers: Answer...) {
        self.answers += answers
    }

    /// Sets what Apple says of `userIdentifier`'s credential from now on.
    public func setCredentialState(_ state: AppleCredentialState, forUserID userIdentifier: String) {
        states[userIdentifier] = state
    }

    public func requestCredential(hashedNonce: String) async throws(KitError) -> AppleIDAuthorization {
        hashedNonces.append(hashedNonce)
        let answer = answers.isEmpty ? .authorize(userIdentifier: "apple.ana", email: FakeData.user.email ?? "") : answers.removeFirst()
        switch answer {
        case .authorize(let user, let email, let given, let family):
            return AppleIDAuthorization(
                userIdentifier: user, identityToken: "fake:\(email)#\(hashedNonce)", authorizationCode: "fake-code", givenName: given, familyName: family)
        case .cancel:
            throw .cancelled
        case .fail(let error):
            throw error
        }
    }

    public func credentialState(forUserID userIdentifier: String) async -> AppleCredentialState {
        stateQueries.append(userIdentifier)
        return states[userIdentifier] ?? .authorized
    }
}

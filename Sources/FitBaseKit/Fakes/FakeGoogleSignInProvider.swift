import FitBaseCore
import Foundation

/// Google's sign-in as a test or preview scripts it: each sign-in answers with the next scripted ``Answer`` (signing
/// in as Ana when none is left). Its ID tokens are ``FakeAuthService``'s, `fake:<address>#<nonce>`: the nonce the
/// request carried, as Google's `nonce` claim is.
public actor FakeGoogleSignInProvider: GoogleSignInProvider {
    /// What the next sign-in does.
    public enum Answer: Sendable, Equatable {
        /// The user picks the Google account of `email`.
        case signIn(email: String)
        /// A token of `email` minted for another request, with `nonce` (replayed, or from another app).
        case replay(email: String, nonce: String)
        /// The user closes Google's sheet.
        case cancel
        /// Google fails.
        case fail(KitError)
    }

    private var answers: [Answer]
    /// The nonces the sign-ins were asked with, in order.
    public private(set) var nonces: [String] = []

    /// A provider answering `answers` in order.
    public init(_ answers: [Answer] = []) {
        self.answers = answers
    }

    /// Queues `answers` after those still waiting.
    public func script(_ answers: Answer...) {
        self.answers += answers
    }

    public func idToken(nonce: String) async throws(KitError) -> String {
        nonces.append(nonce)
        switch answers.isEmpty ? .signIn(email: FakeData.user.email ?? "") : answers.removeFirst() {
        case .signIn(let email): return "fake:\(email)#\(nonce)"
        case .replay(let email, let other): return "fake:\(email)#\(other)"
        case .cancel: throw .cancelled
        case .fail(let error): throw error
        }
    }
}

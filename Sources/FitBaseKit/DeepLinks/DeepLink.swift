import Foundation

/// A link the app was opened with, understood: what the app should do.
public enum DeepLink: Sendable, Equatable, Hashable {
    /// Join (or preview) the group of this invite code: `{scheme}://group/invite/{code}`, `https://{host}/group/invite/{code}`.
    case invite(code: String)
    /// Redeem an e-mail verification (or address change) link: `https://{host}/auth/verify?token=…`.
    case verifyEmail(token: String)
    /// Open the new-password form for a reset link: `https://{host}/auth/reset?token=…`.
    case resetPassword(token: String)

    /// A link's kind without its secret (for analytics and logs).
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case invite, verifyEmail, resetPassword
    }

    /// The link's kind.
    public var kind: Kind {
        switch self {
        case .invite: .invite
        case .verifyEmail: .verifyEmail
        case .resetPassword: .resetPassword
        }
    }
}

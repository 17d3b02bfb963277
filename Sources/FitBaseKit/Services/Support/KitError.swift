import FitBaseCore
import Foundation

/// A failure as the app layer reports it: what kind of failure, a message for the user, whether trying again can help,
/// and — for a paywall — the tier that unlocks what was asked for.
///
/// Every service throws only this type, so a view model needs one `catch` and one way to present it.
public struct KitError: Error, Sendable, Equatable {
    /// What went wrong, to branch on (show a paywall, send to sign-in, highlight fields …).
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The server could not be reached (no connection, timeout).
        case offline
        /// Nobody is signed in, or the server ended the session.
        case notSignedIn
        /// The address and password (or the Apple / Google token) were not accepted.
        case invalidCredentials
        /// The action needs a recent sign-in: ask for the password (or Apple / Google) again.
        case reauthenticationRequired
        /// The user's tier does not include it: ``KitError/requiredTier`` says which does.
        case upgradeRequired
        /// The input was refused: ``KitError/fieldErrors`` names the fields.
        case invalidInput
        /// It does not exist, or is not the user's.
        case notFound
        /// It clashes with the current state (already in a group, group full, address taken …).
        case conflict
        /// Too many requests: wait and try again.
        case rateLimited
        /// The action is not allowed for this user (not the group's admin, wrong password …).
        case forbidden
        /// The server failed or is busy.
        case server
        /// The device could not save or read its own data.
        case storage
        /// The operation was cancelled (the screen went away).
        case cancelled
        /// A payment or store step failed.
        case purchaseFailed
    }

    /// What went wrong.
    public var kind: Kind
    /// A sentence suitable for the app's user.
    public var message: String
    /// Whether the same action may succeed if tried again later (a retry button makes sense).
    public var isRetryable: Bool
    /// For ``Kind/upgradeRequired``: the lowest tier that unlocks the action.
    public var requiredTier: SubscriptionTier?
    /// For ``Kind/invalidInput``: the offending fields and what is wrong with each.
    public var fieldErrors: [String: String]
    /// The server's stable problem code (``ProblemCode/upgradeRequired``, ``ProblemCode/groupFull`` …) when it reported
    /// one this version knows; a fake fails with the code the server would send.
    public var code: ProblemCode?
    /// The code as the server sent it, known or not: a newer server's code reads `nil` in ``code`` and is kept here.
    public var rawCode: String?
    /// The request id to quote to support, when the server gave one.
    public var requestID: String?

    /// Makes an error; `isRetryable` defaults to what `kind` usually means, `rawCode` to the text of `code`.
    public init(
        _ kind: Kind, message: String? = nil, isRetryable: Bool? = nil, requiredTier: SubscriptionTier? = nil, fieldErrors: [String: String] = [:],
        code: ProblemCode? = nil, rawCode: String? = nil, requestID: String? = nil
    ) {
        self.kind = kind
        self.message = message ?? kind.defaultMessage
        self.isRetryable = isRetryable ?? kind.isUsuallyRetryable
        self.requiredTier = requiredTier
        self.fieldErrors = fieldErrors
        self.code = code
        self.rawCode = rawCode ?? code?.rawValue
        self.requestID = requestID
    }

    /// The device is offline.
    public static let offline = KitError(.offline)
    /// Nobody is signed in.
    public static let notSignedIn = KitError(Kind.notSignedIn)
    /// The operation was cancelled.
    public static let cancelled = KitError(.cancelled)

    /// An upgrade to `tier` is needed.
    public static func upgradeRequired(_ tier: SubscriptionTier) -> KitError {
        KitError(.upgradeRequired, message: "This needs \(tier.rawValue.capitalized). Upgrade to unlock it.", requiredTier: tier, code: .upgradeRequired)
    }
}

extension KitError.Kind {
    /// The message shown when the server gave none.
    var defaultMessage: String {
        switch self {
        case .offline: "You're offline. Check your connection and try again."
        case .notSignedIn: "Please sign in."
        case .invalidCredentials: "That e-mail and password don't match. Check them and try again."
        case .reauthenticationRequired: "For your security, please sign in again to continue."
        case .upgradeRequired: "Upgrade your plan to unlock this."
        case .invalidInput: "Some details need fixing."
        case .notFound: "This is no longer available."
        case .conflict: "This can't be done right now."
        case .rateLimited: "Too many attempts. Please wait a moment and try again."
        case .forbidden: "You're not allowed to do that."
        case .server: "Something went wrong on our side. Please try again later."
        case .storage: "Your data could not be saved on this device. Check the free space and try again."
        case .cancelled: "Cancelled."
        case .purchaseFailed: "The purchase could not be completed. You have not been charged."
        }
    }

    /// Whether an error of this kind usually goes away by trying again.
    var isUsuallyRetryable: Bool {
        switch self {
        case .offline, .rateLimited, .server, .storage, .purchaseFailed: true
        case .notSignedIn, .invalidCredentials, .reauthenticationRequired, .upgradeRequired, .invalidInput, .notFound, .conflict, .forbidden, .cancelled: false
        }
    }
}

extension KitError {
    /// The failure of input that broke `invalid`'s rules, one message per field.
    public init(_ invalid: InvalidFields) {
        var fields: [String: String] = [:]
        for error in invalid.errors where fields[error.field] == nil { fields[error.field] = error.message }
        let first = invalid.errors.first.map { "\($0.field) \($0.message)." }
        self.init(.invalidInput, message: first, fieldErrors: fields, code: .validationFailed)
    }
}

import FitBaseCore
import Foundation

/// What a screen shows about a paywalled action: the tier that unlocks it and the sentence to put on the prompt.
public struct UpgradePrompt: Sendable, Equatable {
    /// The lowest tier that unlocks it.
    public var requiredTier: SubscriptionTier
    /// The feature asked for, when the screen knows it.
    public var feature: Feature?
    /// A sentence for the prompt.
    public var message: String

    /// Makes a prompt.
    public init(requiredTier: SubscriptionTier, feature: Feature? = nil, message: String? = nil) {
        self.requiredTier = requiredTier
        self.feature = feature
        self.message = message ?? "This needs \(requiredTier.rawValue.capitalized). Upgrade to unlock it."
    }
}

/// A failure as a screen presents it (seed 002's error presentation): the user-facing message, whether a retry
/// button makes sense, the upgrade prompt for a paywalled action and the per-field messages for a form.
public struct ScreenError: Sendable, Equatable {
    /// What went wrong, to branch on (send to sign-in, show the paywall …).
    public var kind: KitError.Kind
    /// A sentence for the user.
    public var message: String
    /// Whether a retry button makes sense.
    public var isRetryable: Bool
    /// For an action the user's tier does not include: the prompt leading to the paywall.
    public var upgrade: UpgradePrompt?
    /// For a refused form: the message of each offending field.
    public var fieldErrors: [String: String]

    /// The presentation of `error`.
    public init(_ error: KitError, feature: Feature? = nil) {
        kind = error.kind
        message = error.message
        isRetryable = error.isRetryable
        upgrade = error.requiredTier.map { UpgradePrompt(requiredTier: $0, feature: feature, message: error.message) }
        fieldErrors = error.fieldErrors
    }

    /// An error found on the device before anything was sent (a form's own validation).
    public static func invalid(_ fields: [String: String]) -> ScreenError {
        ScreenError(KitError(.invalidInput, fieldErrors: fields))
    }

    /// Whether the device is offline (show the offline banner rather than an alert).
    public var isOffline: Bool { kind == .offline }
}

extension KitError {
    /// Whether the failure only means the screen went away or a newer request replaced this one: nothing to show.
    var isCancellation: Bool { kind == .cancelled }
}

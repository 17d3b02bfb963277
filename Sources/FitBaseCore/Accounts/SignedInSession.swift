#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A device signed in to the account (one session), for the "signed-in devices" list: the contract's `SessionInfo`.
public struct SignedInSession: Sendable, Equatable, Identifiable, Codable {
    /// The session's id (what ``deleteSession`` ends).
    public var id: SessionID
    /// What the device called itself at sign-in, when it did.
    public var deviceLabel: String?
    /// When the device signed in.
    public var createdAt: Date
    /// When the device last refreshed its tokens.
    public var lastUsedAt: Date
    /// This device's own session (`current` on the wire).
    public var isCurrent: Bool

    private enum CodingKeys: String, CodingKey {
        case id, deviceLabel, createdAt, lastUsedAt
        case isCurrent = "current"
    }

    /// A session's description.
    public init(id: SessionID, deviceLabel: String?, createdAt: Date, lastUsedAt: Date, isCurrent: Bool) {
        self.id = id
        self.deviceLabel = deviceLabel
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.isCurrent = isCurrent
    }
}

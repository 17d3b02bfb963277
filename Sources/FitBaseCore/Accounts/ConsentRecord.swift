#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A consent answer in force, as ``listConsents`` and ``recordConsent`` answer it (the contract's `Consent`).
public struct ConsentRecord: Sendable, Equatable, Codable {
    /// What it is about.
    public var kind: ConsentKind
    /// The version of the document or wording answered, e.g. `2026-01`.
    public var version: String
    /// The answer in force.
    public var granted: Bool
    /// When it was given.
    public var recordedAt: Date
    /// The latest answers of this kind (at most 50), oldest first; the export has them all.
    public var history: [Answer]

    /// One answer of a kind.
    public struct Answer: Sendable, Equatable, Codable {
        /// The version answered.
        public var version: String
        /// The answer.
        public var granted: Bool
        /// When it was given.
        public var recordedAt: Date

        /// An answer of the given parts.
        public init(version: String, granted: Bool, recordedAt: Date) {
            self.version = version
            self.granted = granted
            self.recordedAt = recordedAt
        }
    }

    /// A consent value; its history is the answer itself unless given.
    public init(kind: ConsentKind, version: String, granted: Bool, recordedAt: Date, history: [Answer]? = nil) {
        self.kind = kind
        self.version = version
        self.granted = granted
        self.recordedAt = recordedAt
        self.history = history ?? [Answer(version: version, granted: granted, recordedAt: recordedAt)]
    }
}

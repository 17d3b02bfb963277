#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An e-mail address in the one form FitBase stores and compares: trimmed and lower-cased.
public struct EmailAddress: Hashable, Sendable, CustomStringConvertible {
    /// The normalised address.
    public let value: String

    /// Normalises `text`; `nil` when it is not a plausible address (one `@`, a dotted domain, no spaces, ≤ 254 bytes).
    public init?(_ text: String) {
        let normalized = text.trimmingWhitespace.lowercased()
        let parts = normalized.split(separator: "@", omittingEmptySubsequences: false)
        guard normalized.utf8.count <= 254, parts.count == 2,
            let local = parts.first, let domain = parts.last,
            !local.isEmpty, local.utf8.count <= 64,
            domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.contains(".."),
            !normalized.contains(where: { $0.isWhitespace || $0.isNewline })
        else { return nil }
        self.value = normalized
    }

    public var description: String { value }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The rules a new password must meet. The client can check them before sending; the server enforces them.
public enum PasswordPolicy {
    /// Fewest characters accepted.
    public static let minimumCharacters = 10
    /// Most UTF-8 bytes accepted: bcrypt ignores everything past 72 bytes.
    public static let maximumBytes = 72

    /// One rule a password breaks.
    public enum Violation: String, Sendable, CaseIterable {
        case tooShort = "min_length"
        case tooLong = "max_bytes"
        case sameAsEmail = "not_email"

        /// The rule in words, for problem details and UI.
        public var message: String {
            switch self {
            case .tooShort: "must be at least \(PasswordPolicy.minimumCharacters) characters (rule \(rawValue))"
            case .tooLong: "must be at most \(PasswordPolicy.maximumBytes) bytes in UTF-8 (rule \(rawValue))"
            case .sameAsEmail: "must not be the e-mail address (rule \(rawValue))"
            }
        }
    }

    /// Every rule `password` breaks, in a stable order; empty when it is acceptable.
    public static func violations(of password: String, email: EmailAddress?) -> [Violation] {
        var violations: [Violation] = []
        if password.count < minimumCharacters { violations.append(.tooShort) }
        if password.utf8.count > maximumBytes { violations.append(.tooLong) }
        if let email, password.lowercased().trimmingWhitespace == email.value {
            violations.append(.sameAsEmail)
        }
        return violations
    }
}

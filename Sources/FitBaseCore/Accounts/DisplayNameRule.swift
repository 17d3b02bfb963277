#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The name an account shows on its profile and on group leaderboards: trimmed of surrounding whitespace, at most
/// 100 characters, and no name at all when nothing is left. The server checks it on sign-up and profile updates and
/// cuts a provider's name to it; the app checks its forms and its fakes save by it.
public enum DisplayNameRule {
    /// The most characters (as Swift counts them: what the user sees as one) a name may have.
    public static let maximumCharacters = 100
    /// The broken rule in words, written to follow the field's name.
    public static let message = "must be at most \(maximumCharacters) characters"

    /// `text` as it is kept: trimmed, `nil` when empty; throws the broken rule (field `displayName`) when too long.
    public static func checked(_ text: String) throws(InvalidFields) -> String? {
        let name = trimmed(text)
        guard name.count <= maximumCharacters else { throw InvalidFields([FieldError(field: "displayName", message: message)]) }
        return name.isEmpty ? nil : name
    }

    /// Whether `text` is too long once trimmed (the forms' check; an empty name is theirs to refuse or allow).
    public static func isTooLong(_ text: String) -> Bool {
        trimmed(text).count > maximumCharacters
    }

    /// A name given by Apple or Google, which the user did not type here: trimmed and cut to the maximum (then
    /// trimmed again, so a cut never ends in a space); `nil` when empty.
    public static func truncated(_ text: String?) -> String? {
        guard let text else { return nil }
        let name = trimmed(String(trimmed(text).prefix(maximumCharacters)))
        return name.isEmpty ? nil : name
    }

    /// `text` without leading and trailing whitespace and newlines, scalar by scalar as Foundation trims.
    public static func trimmed(_ text: String) -> String {
        text.trimmingScalars(where: \.isWhitespaceOrNewline)
    }
}

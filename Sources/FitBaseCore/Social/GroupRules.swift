// Named time zones need the time-zone database, which FoundationEssentials lacks on Linux.
import Foundation

/// The rules of a challenge group: at most ``maximumMembers`` members, a name of 1–60 characters once trimmed, weeks
/// that run in an IANA time zone.
public enum GroupRules {
    /// The most members a group has (seed 004).
    public static let maximumMembers = 10
    /// The longest name, in characters, once trimmed.
    public static let maximumNameLength = 60

    /// A new group's name trimmed and its time zone (UTC when not given); throws every broken rule at once.
    public static func checked(name: String, timeZone: String?) throws(InvalidFields) -> (name: String, timeZone: String) {
        var errors: [FieldError] = []
        let trimmed = name.trimmingScalars(where: \.isWhitespaceOrNewline)
        if trimmed.isEmpty || trimmed.count > maximumNameLength {
            errors.append(.init(field: "name", message: "must be 1–\(maximumNameLength) characters"))
        }
        let zone = timeZone ?? "UTC"
        if TimeZone(identifier: zone) == nil { errors.append(.init(field: "timeZone", message: "must be an IANA time zone such as Europe/Berlin")) }
        guard errors.isEmpty else { throw InvalidFields(errors) }
        return (trimmed, zone)
    }
}

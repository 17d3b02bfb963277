import FitBaseCore
import Foundation

/// Turns instants into the user's local calendar days. Time zones with half- and quarter-hour offsets and daylight
/// saving are Foundation's business; everything after this works on whole days.
enum LocalCalendar {
    /// The day `instant` falls on in `timeZone` (an IANA name; UTC when `nil` or unknown).
    static func day(of instant: Date, in timeZone: String?) -> CalendarDay {
        CalendarDay(instant, in: Self.timeZone(timeZone))
    }

    /// The time zone an IANA name names; UTC when `nil` or unknown.
    static func timeZone(_ identifier: String?) -> TimeZone {
        identifier.flatMap(TimeZone.init(identifier:)) ?? .gmt
    }

    /// Whether `name` may be stored as a user's or a device's time zone: what a phone reports as `TimeZone.current` —
    /// an Area/Location name, `UTC`, `GMT`, `Etc/UTC` or `Etc/GMT` — and Foundation knows. Not an abbreviation like
    /// `EST` or a fixed offset like `Etc/GMT+5`, which ignore daylight saving.
    static func isAcceptedZoneName(_ name: String) -> Bool {
        let fixedNames: Set<String> = ["UTC", "GMT", "Etc/UTC", "Etc/GMT"]
        guard fixedNames.contains(name) || (name.contains("/") && !name.hasPrefix("Etc/")) else { return false }
        return TimeZone(identifier: name) != nil
    }
}

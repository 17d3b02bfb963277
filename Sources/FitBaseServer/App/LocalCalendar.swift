import FitBaseCore
import Foundation

/// Turns instants into the user's local calendar days. Time zones with half- and quarter-hour offsets and daylight
/// saving are Foundation's business; everything after this works on whole days.
enum LocalCalendar {
    /// The day `instant` falls on in `timeZone` (an IANA name; UTC when `nil` or unknown).
    static func day(of instant: Date, in timeZone: String?) -> CalendarDay {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = Self.timeZone(timeZone)
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        return CalendarDay(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1) ?? CalendarDay(daysSince1970: 0)
    }

    /// The time zone an IANA name names; UTC when `nil` or unknown.
    static func timeZone(_ identifier: String?) -> TimeZone {
        identifier.flatMap(TimeZone.init(identifier:)) ?? .gmt
    }

    /// Today in `timeZone`.
    static func today(in timeZone: String?) -> CalendarDay {
        day(of: .now, in: timeZone)
    }
}

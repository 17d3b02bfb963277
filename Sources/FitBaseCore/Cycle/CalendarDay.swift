/// A date without a time: a day number counted from 1970-01-01, so day arithmetic is integer arithmetic.
///
/// Which day "today" is depends on the user's time zone; callers convert once at the edge and the cycle rules work
/// on days only.
public struct CalendarDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01 (negative before).
    public let daysSince1970: Int

    public init(daysSince1970: Int) {
        self.daysSince1970 = daysSince1970
    }

    /// The day `year-month-day` of the proleptic Gregorian calendar; `nil` when it does not exist (2026-02-30).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        let candidate = CalendarDay(daysSince1970: InternetDateTime.daysSince1970(year: year, month: month, day: day))
        guard candidate.components == (year, month, day) else { return nil }
        self = candidate
    }

    /// Parses `YYYY-MM-DD`.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// `(year, month, day)` (civil from days).
    public var components: (year: Int, month: Int, day: Int) {
        InternetDateTime.civil(daysSince1970: daysSince1970)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        let (year, month, day) = components
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public func adding(days: Int) -> CalendarDay { CalendarDay(daysSince1970: daysSince1970 + days) }

    /// Whole days from `self` to `other` (positive when `other` is later).
    public func days(until other: CalendarDay) -> Int { other.daysSince1970 - daysSince1970 }

    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool { lhs.daysSince1970 < rhs.daysSince1970 }
}

extension CalendarDay: Codable {
    /// Decodes `YYYY-MM-DD`, as the API writes days.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let day = CalendarDay(try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "is not a date written YYYY-MM-DD")
        }
        self = day
    }

    /// Encodes `YYYY-MM-DD`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

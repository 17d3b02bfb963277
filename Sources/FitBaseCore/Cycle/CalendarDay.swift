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

    /// Parses `YYYY-MM-DD` (ASCII digits only; every list row carries a day, so this reads the bytes directly).
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ bytes -> (Int, Int, Int)? in
            guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var value = 0
                for index in range {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
            return (year, month, day)
        }) else { return nil }
        self.init(year: parsed.0, month: parsed.1, day: parsed.2)
    }

    /// `(year, month, day)` (civil from days).
    public var components: (year: Int, month: Int, day: Int) {
        InternetDateTime.civil(daysSince1970: daysSince1970)
    }

    /// `YYYY-MM-DD` (years outside 0...9999 are written in full, with their sign).
    public var description: String {
        let (year, month, day) = components
        guard (0...9_999).contains(year) else {
            let digits = String(abs(year))
            return (year < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
        }
        return String(unsafeUninitializedCapacity: 10) { bytes in
            func put(_ value: Int, width: Int, at start: Int) {
                var value = value
                for index in stride(from: start + width - 1, through: start, by: -1) {
                    bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, width: 4, at: 0)
            bytes[4] = UInt8(ascii: "-")
            put(month, width: 2, at: 5)
            bytes[7] = UInt8(ascii: "-")
            put(day, width: 2, at: 8)
            return 10
        }
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

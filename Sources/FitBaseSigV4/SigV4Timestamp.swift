#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The instant a request is signed at, in the two UTC forms SigV4 uses: `20150830T123600Z` and `20150830`.
public struct SigV4Timestamp: Sendable, Equatable {
    /// `YYYYMMDD'T'HHMMSS'Z'`, the `X-Amz-Date` value.
    public let amzDate: String
    /// `YYYYMMDD`, the credential scope's date.
    public var dateStamp: String { String(amzDate.prefix(8)) }

    /// The timestamp of `date`, truncated to the second.
    public init(_ date: Date) {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = Self.civilDate(daysSince1970: days)
        amzDate =
            Self.pad(year, 4) + Self.pad(month, 2) + Self.pad(day, 2) + "T"
            + Self.pad(secondOfDay / 3600, 2) + Self.pad(secondOfDay % 3600 / 60, 2) + Self.pad(secondOfDay % 60, 2)
            + "Z"
    }

    /// The proleptic Gregorian date of a day count (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSince1970: Int64) -> (Int64, Int64, Int64) {
        let z = daysSince1970 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

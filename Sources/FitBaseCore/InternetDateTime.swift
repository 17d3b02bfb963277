import Foundation

/// RFC 3339 date-times (`2026-11-20T08:00:00Z`, `2026-11-20T13:45:00+05:45`), read and written by hand.
///
/// Foundation's `ISO8601DateFormatter` goes through ICU and took 8 % of the CPU of a request with one date in its
/// body. This reads RFC 3339 as that formatter (default options) reads it — an offset `Z`, `±HH:MM` or `±HHMM`; a day
/// past the month's end rolls into the next month and `24:00:00` into the next day — and also fractional seconds and
/// lower-case `t`/`z`, which RFC 3339 allows; text that is not RFC 3339 (no offset, trailing characters) is refused
/// where ICU would guess. It writes what the formatter writes: UTC, whole seconds (the instant rounded to the
/// millisecond, then its second). Days are Gregorian throughout, as RFC 3339 says (ICU counts Julian days before 1583).
public enum InternetDateTime {
    /// The instant `text` names, or `nil` if it is not an RFC 3339 date-time.
    public static func date(from text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            var reader = Reader(bytes: bytes)
            guard let year = reader.number(digits: 4), reader.skip("-"), let month = reader.number(digits: 2), reader.skip("-"),
                let day = reader.number(digits: 2), reader.skip("T") || reader.skip("t"),
                let hour = reader.number(digits: 2), reader.skip(":"), let minute = reader.number(digits: 2), reader.skip(":"),
                let second = reader.number(digits: 2),
                (1...12).contains(month), (1...31).contains(day), hour <= 24, minute <= 59, second <= 59
            else { return nil }
            var fraction = 0.0
            if reader.skip(".") {
                // Up to nanoseconds; further digits are read and dropped.
                var numerator = 0
                var denominator = 1
                var digits = 0
                while let digit = reader.digit() {
                    if digits < 9 {
                        numerator = numerator * 10 + digit
                        denominator *= 10
                    }
                    digits += 1
                }
                guard digits > 0 else { return nil }
                fraction = Double(numerator) / Double(denominator)
            }
            var offset = 0
            if reader.skip("Z") || reader.skip("z") {
                offset = 0
            } else if let sign = reader.sign() {
                guard let hours = reader.number(digits: 2) else { return nil }
                _ = reader.skip(":")
                guard let minutes = reader.number(digits: 2), hours <= 23, minutes <= 59 else { return nil }
                offset = sign * (hours * 3_600 + minutes * 60)
            } else {
                return nil
            }
            guard reader.isAtEnd else { return nil }
            let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second - offset
            return Date(timeIntervalSince1970: Double(seconds) + fraction)
        }
    }

    /// `date` in UTC to the second: `2026-11-20T08:00:00Z`.
    public static func string(from date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1_000).rounded()
        let seconds = Int((milliseconds / 1_000).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(daysSince1970: days)
        var bytes = [UInt8]()
        bytes.reserveCapacity(20)
        func append(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                value %= divisor
                divisor /= 10
            }
        }
        append(year, digits: 4)
        bytes.append(UInt8(ascii: "-"))
        append(month, digits: 2)
        bytes.append(UInt8(ascii: "-"))
        append(day, digits: 2)
        bytes.append(UInt8(ascii: "T"))
        append(secondOfDay / 3_600, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(secondOfDay / 60 % 60, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(secondOfDay % 60, digits: 2)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (`civil_from_days`).
    static func civil(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: character) else { return false }
            offset += 1
            return true
        }

        mutating func digit() -> Int? {
            guard offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) else { return nil }
            defer { offset += 1 }
            return Int(bytes[offset] - UInt8(ascii: "0"))
        }

        mutating func number(digits: Int) -> Int? {
            var value = 0
            for _ in 0..<digits {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}

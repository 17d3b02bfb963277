import Foundation
import Testing

@testable import FitBaseCore

/// The hand-written RFC 3339 reader and writer agree with Foundation's `ISO8601DateFormatter` (default options) on
/// RFC 3339 text from 1583 on (before the Gregorian reform the formatter counts Julian days; RFC 3339 is Gregorian
/// throughout), and also read fractional seconds. Text that is not RFC 3339 is refused even where ICU would guess.
@Suite struct InternetDateTimeTests {
    @Test func writesWhatTheFormatterWrites() {
        let formatter = ISO8601DateFormatter()
        var generator = SplitMix(state: 3339)
        let instants = [0, -0.4, -1.5, 1_794_700_000.4, 1_794_700_000.6, 1_794_700_000.9999, 951_782_400, -12_212_553_600, 253_402_300_799]
            + (0..<2_000).map { _ in Double.random(in: -1.2e10..<2.5e11, using: &generator) }
        for seconds in instants {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(InternetDateTime.string(from: date) == formatter.string(from: date), "\(seconds)")
        }
    }

    @Test func readsWhatTheFormatterReads() {
        let formatter = ISO8601DateFormatter()
        let texts = [
            "2026-11-20T08:00:00Z", "2026-11-20T08:00:00+05:45", "2026-11-20T08:00:00-03:30", "2026-11-20T08:00:00+0545",
            "2026-02-30T08:00:00Z", "2026-11-20T24:00:00Z", "1583-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "1969-12-31T23:59:59Z",
            "2026-11-20 08:00:00Z", "20261120T080000Z", "2026-11-20T08:00:60Z", "2026-13-01T00:00:00Z", "",
        ]
        for text in texts {
            #expect(InternetDateTime.date(from: text) == formatter.date(from: text), "\(text)")
        }
        // Not RFC 3339: no offset, no seconds, a one-digit offset hour, trailing text.
        for text in ["2026-11-20T08:00:00", "2026-11-20T08:00Z", "2026-11-20T08:00:00+5:45", "2026-11-20T08:00:00Zjunk"] {
            #expect(InternetDateTime.date(from: text) == nil, "\(text)")
        }
    }

    @Test func readsFractionalSecondsAndLowerCaseLetters() {
        #expect(InternetDateTime.date(from: "2026-11-20T08:00:00.125Z")?.timeIntervalSince1970 == 1_795_161_600.125)
        #expect(InternetDateTime.date(from: "2026-11-20t08:00:00.5z")?.timeIntervalSince1970 == 1_795_161_600.5)
        #expect(InternetDateTime.date(from: "2026-11-20T08:00:00.Z") == nil)
        let rounded = InternetDateTime.date(from: "2026-11-20T08:00:00.1234567891234Z")?.timeIntervalSince1970
        #expect(rounded.map { abs($0 - 1_795_161_600.123456789) < 1e-6 } == true)
    }
}

// Calendar arithmetic in a named time zone needs the time-zone database, which FoundationEssentials lacks on Linux.
import Foundation

extension CalendarDay {
    /// The day `date` falls on in `timeZone`.
    public init(_ date: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        self = CalendarDay(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1) ?? CalendarDay(daysSince1970: 0)
    }

    /// The instant the day starts in `timeZone`.
    public func start(in timeZone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let (year, month, day) = components
        return calendar.date(from: DateComponents(year: year, month: month, day: day)) ?? Date(timeIntervalSince1970: Double(daysSince1970) * 86_400)
    }

    /// The days of month `month` (1…12) of `year`; empty for an invalid month.
    public static func days(ofMonth month: Int, year: Int) -> [CalendarDay] {
        guard let first = CalendarDay(year: year, month: month, day: 1) else { return [] }
        var days: [CalendarDay] = []
        var day = first
        while day.components.month == month {
            days.append(day)
            day = day.adding(days: 1)
        }
        return days
    }
}

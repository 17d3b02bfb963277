// Calendar arithmetic in a named time zone needs the time-zone database, which FoundationEssentials lacks on Linux.
import Foundation

/// One challenge week of a group: Monday 00:00 to the next Monday 00:00 in the group's IANA time zone.
///
/// Week edges are local midnights, so a week is 167 or 169 hours long when a DST change falls inside it. Where a
/// time zone skips midnight (clocks jump from 23:59:59 to 01:00), the week starts at the first instant of the day.
public struct ChallengeWeek: Sendable, Equatable, Hashable {
    /// The Monday (local) the week starts on.
    public let startDay: CalendarDay
    /// The instant the week starts (Monday 00:00 local).
    public let start: Date
    /// The instant the next week starts (exclusive end).
    public let end: Date

    /// The last instant shown to people: Sunday 23:59:59 local (end − 1 s).
    public var lastSecond: Date { end.addingTimeInterval(-1) }

    /// The local days of the week, Monday first (7 days).
    public var days: [CalendarDay] { (0..<7).map { startDay.adding(days: $0) } }

    /// The week containing `instant` in `timeZone`.
    public static func containing(_ instant: Date, in timeZone: TimeZone) -> ChallengeWeek {
        let calendar = Self.calendar(in: timeZone)
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        // A Gregorian calendar always yields the components asked for, and they name a real day.
        let day = CalendarDay(year: parts.year!, month: parts.month!, day: parts.day!)!
        return ChallengeWeek(monday: WorkoutStreaks.weekStart(of: day), calendar: calendar)
    }

    /// The week starting on `monday` (a Monday) in `timeZone`; nil if `monday` is not a Monday.
    public init?(starting monday: CalendarDay, in timeZone: TimeZone) {
        guard WorkoutStreaks.weekStart(of: monday) == monday else { return nil }
        self.init(monday: monday, calendar: Self.calendar(in: timeZone))
    }

    /// The week before this one.
    public func previous(in timeZone: TimeZone) -> ChallengeWeek {
        ChallengeWeek(monday: startDay.adding(days: -7), calendar: Self.calendar(in: timeZone))
    }

    /// The week after this one.
    public func next(in timeZone: TimeZone) -> ChallengeWeek {
        ChallengeWeek(monday: startDay.adding(days: 7), calendar: Self.calendar(in: timeZone))
    }

    /// Whether `instant` falls in [start, end).
    public func contains(_ instant: Date) -> Bool { start <= instant && instant < end }

    private init(monday: CalendarDay, calendar: Calendar) {
        startDay = monday
        start = Self.firstInstant(of: monday, calendar: calendar)
        end = Self.firstInstant(of: monday.adding(days: 7), calendar: calendar)
    }

    private static func calendar(in timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// The first instant of local `day`: midnight, or the end of a DST gap that swallowed midnight.
    private static func firstInstant(of day: CalendarDay, calendar: Calendar) -> Date {
        let (year, month, dayOfMonth) = day.components
        // Noon exists on every day a DST change can touch; a Gregorian calendar always resolves it.
        let noon = calendar.date(from: DateComponents(year: year, month: month, day: dayOfMonth, hour: 12))!
        return calendar.startOfDay(for: noon)
    }
}

/// The streak challenge's value: consecutive local days with a workout.
public enum ChallengeStreak {
    /// The length of the run of consecutive days in `days` that ends on the latest day of `days` within `week` (0 if
    /// none): what a member's streak entry shows after their workouts so far in that week. Days outside the week are
    /// ignored (a week's streak starts counting on its Monday).
    public static func value(days: Set<CalendarDay>, in week: ChallengeWeek) -> Int {
        let inWeek = days.intersection(week.days)
        guard let latest = inWeek.max() else { return 0 }
        return WorkoutStreaks.current(days: inWeek, today: latest)
    }
}

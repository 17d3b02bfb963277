/// Streaks of consecutive local days with at least one workout.
public enum WorkoutStreaks {
    /// The streak still alive on `today`: consecutive days ending today, or ending yesterday when today has no workout
    /// yet (a streak is not broken until a whole day passes without one).
    public static func current(days: Set<CalendarDay>, today: CalendarDay) -> Int {
        var day = days.contains(today) ? today : today.adding(days: -1)
        var count = 0
        while days.contains(day) {
            count += 1
            day = day.adding(days: -1)
        }
        return count
    }

    /// The longest run of consecutive days ever.
    public static func longest(days: Set<CalendarDay>) -> Int {
        var longest = 0
        for day in days where !days.contains(day.adding(days: -1)) {
            var length = 1
            while days.contains(day.adding(days: length)) { length += 1 }
            longest = max(longest, length)
        }
        return longest
    }

    /// The Monday starting the week of `day` (ISO weeks).
    public static func weekStart(of day: CalendarDay) -> CalendarDay {
        // 1970-01-01 was a Thursday: shift so Monday is 0.
        let weekday = ((day.daysSince1970 + 3) % 7 + 7) % 7
        return day.adding(days: -weekday)
    }
}

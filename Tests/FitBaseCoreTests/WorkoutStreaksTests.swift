import FitBaseCore
import Testing

@Suite struct WorkoutStreaksTests {
    private let today = CalendarDay("2026-11-22")!

    private func days(_ offsets: [Int]) -> Set<CalendarDay> { Set(offsets.map { today.adding(days: $0) }) }

    @Test func currentStreakSurvivesUntilADayIsMissed() {
        #expect(WorkoutStreaks.current(days: days([0, -1, -2, -4]), today: today) == 3)
        #expect(WorkoutStreaks.current(days: days([-1, -2]), today: today) == 2)  // today not trained yet
        #expect(WorkoutStreaks.current(days: days([-2, -3]), today: today) == 0)
        #expect(WorkoutStreaks.current(days: [], today: today) == 0)
    }

    @Test func longestStreakFindsTheLongestRun() {
        #expect(WorkoutStreaks.longest(days: days([0, -1, -5, -6, -7, -8, -20])) == 4)
        #expect(WorkoutStreaks.longest(days: []) == 0)
    }

    @Test func weeksStartOnMonday() {
        #expect(WorkoutStreaks.weekStart(of: CalendarDay("2026-11-22")!).description == "2026-11-16")  // a Sunday
        #expect(WorkoutStreaks.weekStart(of: CalendarDay("2026-11-16")!).description == "2026-11-16")
        #expect(WorkoutStreaks.weekStart(of: CalendarDay("1969-12-31")!).description == "1969-12-29")
    }
}

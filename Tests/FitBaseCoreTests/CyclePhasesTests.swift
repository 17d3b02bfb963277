import FitBaseCore
import Foundation
import Testing

@Suite struct CyclePhasesTests {
    @Test func everyDayOfEveryCycleLengthHasExactlyOnePhaseInOrder() {
        let order: [CyclePhase] = [.menstrual, .follicular, .ovulatory, .luteal]
        for length in 21...45 {
            for periodLength in 2...10 {
                let phases = (1...length).map { CyclePhases.position(cycleDay: $0, length: length, periodLength: periodLength) }
                let indices = phases.compactMap { order.firstIndex(of: $0.phase) }
                #expect(indices == indices.sorted(), "L=\(length) P=\(periodLength): phases out of order")
                #expect(Set(phases.map(\.phase)) == Set(order), "L=\(length) P=\(periodLength): a phase is empty")
                #expect(phases.prefix(periodLength).allSatisfy { $0.phase == .menstrual }, "L=\(length) P=\(periodLength)")
                #expect(phases.allSatisfy { !$0.isLate && $0.daysUntilNextPhase >= 1 })
                // Counting down to the next phase reaches 1 on each phase's last day.
                for (today, tomorrow) in zip(phases, phases.dropFirst()) {
                    #expect(today.phase == tomorrow.phase ? today.daysUntilNextPhase == tomorrow.daysUntilNextPhase + 1 : today.daysUntilNextPhase == 1)
                }
                #expect(phases.last?.daysUntilNextPhase == 1)
            }
        }
    }

    @Test func twentyEightDayCycleMatchesTheSeedsTable() {
        let phases = (1...28).map { CyclePhases.position(cycleDay: $0, length: 28, periodLength: 5).phase }
        #expect(phases == Array(repeating: .menstrual, count: 5) + Array(repeating: .follicular, count: 8)
            + Array(repeating: .ovulatory, count: 3) + Array(repeating: .luteal, count: 12))
    }

    @Test func aKnownOvulationMovesTheOvulatoryAndLutealPhases() {
        // Ovulation on day 15 of 28 gives the seed's table.
        let seed = (1...28).map { CyclePhases.position(cycleDay: $0, length: 28, periodLength: 5, ovulationDay: 15).phase }
        #expect(seed == (1...28).map { CyclePhases.position(cycleDay: $0, length: 28, periodLength: 5).phase })
        // A late ovulation (day 21 of 34): ovulatory days 20–22, luteal from day 23.
        let late = (1...34).map { CyclePhases.position(cycleDay: $0, length: 34, periodLength: 5, ovulationDay: 21).phase }
        #expect(late == Array(repeating: .menstrual, count: 5) + Array(repeating: .follicular, count: 14)
            + Array(repeating: .ovulatory, count: 3) + Array(repeating: .luteal, count: 12))
        // Every phase keeps at least a day, in order, wherever ovulation is said to fall.
        let order: [CyclePhase] = [.menstrual, .follicular, .ovulatory, .luteal]
        for ovulationDay in 1...40 {
            let phases = (1...30).map { CyclePhases.position(cycleDay: $0, length: 30, periodLength: 5, ovulationDay: ovulationDay).phase }
            let indices = phases.compactMap { order.firstIndex(of: $0) }
            #expect(indices == indices.sorted() && Set(phases) == Set(order), "ovulation on day \(ovulationDay)")
        }
    }

    @Test func aLatePeriodStaysLutealInsteadOfWrapping() {
        let late = CyclePhases.position(cycleDay: 33, length: 28, periodLength: 5)
        #expect(late.phase == .luteal)
        #expect(late.isLate)
        #expect(late.nextPhase == .menstrual)
        #expect(late.daysUntilNextPhase == 0)
    }

    @Test func calendarDaysRoundTripAndRefuseImpossibleDates() {
        for text in ["1970-01-01", "2000-02-29", "2026-11-22", "1969-12-31", "2100-12-31"] {
            #expect(CalendarDay(text)?.description == text)
        }
        #expect(CalendarDay("1970-01-01")?.daysSince1970 == 0)
        #expect(CalendarDay("2026-11-22")?.daysSince1970 == 20_779)
        for text in ["2026-02-29", "2026-13-01", "2026-04-31", "26-1-1", "2026/01/01", ""] {
            #expect(CalendarDay(text) == nil, "\(text)")
        }
        #expect(CalendarDay("2026-02-28")!.adding(days: 1).description == "2026-03-01")
        for text in ["+026-01-01", "2026-0a-01", "2026-01-0 ", "2026-01-01Z", "2026–01–01", "２０２６-01-01"] {
            #expect(CalendarDay(text) == nil, "\(text)")
        }
    }

    /// Every 13th day from year 0 to 9999 (every day of the month and every month, leap or not, in turn) is written as
    /// its own components say, and read back as itself.
    @Test func daysAcrossTenThousandYearsAreWrittenAndReadBack() {
        let first = CalendarDay(year: 0, month: 1, day: 1)!.daysSince1970
        let last = CalendarDay(year: 9_999, month: 12, day: 31)!.daysSince1970
        for days in stride(from: first, through: last, by: 13) {
            let day = CalendarDay(daysSince1970: days)
            let (year, month, date) = day.components
            let expected = String(format: "%04d-%02d-%02d", year, month, date)
            guard day.description == expected, CalendarDay(expected) == day else {
                Issue.record("\(days): \(day.description), expected \(expected)")
                return
            }
        }
    }
}

import FitBaseCore
import Foundation
import Testing

/// The rules of a logged period without a server: today in the user's time zone is given.
@Suite struct PeriodRulesTests {
    static let today = CalendarDay(year: 2026, month: 11, day: 25) ?? CalendarDay(daysSince1970: 0)

    /// The rules broken by `draft`, in order; empty when it passes.
    static func errors(_ draft: PeriodDraft) -> [FieldError] {
        do {
            _ = try PeriodRules.checked(draft, id: PeriodID(), today: today)
            return []
        } catch {
            return error.errors
        }
    }

    @Test func aValidDraftMakesThePeriodWithItsSymptomsCleanedUp() throws {
        let id = PeriodID()
        let draft = PeriodDraft(
            startDate: "2026-11-20", endDate: "2026-11-24", flow: "medium", symptoms: ["  cramps\t", "", "   ", "fatigue", "\nbloating"],
            notes: "Heavy first day."
        )
        let period = try PeriodRules.checked(draft, id: id, today: Self.today)
        #expect(
            period == Period(
                id: id, start: try #require(CalendarDay("2026-11-20")), end: CalendarDay("2026-11-24"), flow: .medium,
                // Only spaces and tabs are trimmed: a line break stays, as it always has.
                symptoms: ["cramps", "fatigue", "\nbloating"], notes: "Heavy first day."
            )
        )
    }

    @Test func aPeriodMayBeOngoingStartTodayAndLastTwentyDays() throws {
        let ongoing = try PeriodRules.checked(PeriodDraft(startDate: "2026-11-25"), id: PeriodID(), today: Self.today)
        #expect(ongoing.start == Self.today)
        #expect(ongoing.end == nil)
        #expect(ongoing.flow == nil)
        #expect(ongoing.symptoms == [])
        #expect(ongoing.notes == nil)
        #expect(Self.errors(PeriodDraft(startDate: "2026-11-01", endDate: "2026-11-01")).isEmpty)
        #expect(Self.errors(PeriodDraft(startDate: "2026-11-01", endDate: "2026-11-20")).isEmpty)
    }

    @Test func atMostThirtySymptomsAreKept() throws {
        let symptoms = (1...40).map { "symptom \($0)" }
        let period = try PeriodRules.checked(PeriodDraft(startDate: "2026-11-20", symptoms: [" "] + symptoms), id: PeriodID(), today: Self.today)
        #expect(period.symptoms == Array(symptoms.prefix(30)))
    }

    @Test(arguments: ["2026-11-31", "20-11-2026", "", "2026-11-20T00:00:00Z"])
    func aStartNotWrittenAsADateIsRefused(_ text: String) {
        #expect(Self.errors(PeriodDraft(startDate: text)) == [FieldError(field: "startDate", message: "must be a date written YYYY-MM-DD")])
    }

    @Test func aStartAfterTodayIsRefused() {
        #expect(Self.errors(PeriodDraft(startDate: "2026-11-26")) == [FieldError(field: "startDate", message: "must not be in the future")])
    }

    @Test func anEndNotWrittenAsADateIsRefused() {
        #expect(
            Self.errors(PeriodDraft(startDate: "2026-11-20", endDate: "next week"))
                == [FieldError(field: "endDate", message: "must be a date written YYYY-MM-DD")]
        )
    }

    @Test(arguments: ["2026-10-31", "2026-11-21"])
    func anEndBeforeTheStartOrTwentyDaysAfterItIsRefused(_ end: String) {
        #expect(
            Self.errors(PeriodDraft(startDate: "2026-11-01", endDate: end))
                == [FieldError(field: "endDate", message: "must be on or after startDate and within 20 days of it")]
        )
    }

    @Test func everyBrokenRuleIsReportedAtOnceInFieldOrder() {
        #expect(
            Self.errors(PeriodDraft(startDate: "2026-12-01", endDate: "soon")) == [
                FieldError(field: "startDate", message: "must not be in the future"),
                FieldError(field: "endDate", message: "must be a date written YYYY-MM-DD"),
            ]
        )
        #expect(
            Self.errors(PeriodDraft(startDate: "2026-12-01", endDate: "2027-01-01")) == [
                FieldError(field: "startDate", message: "must not be in the future"),
                FieldError(field: "endDate", message: "must be on or after startDate and within 20 days of it"),
            ]
        )
        #expect(
            Self.errors(PeriodDraft(startDate: "yesterday", endDate: "today")) == [
                FieldError(field: "startDate", message: "must be a date written YYYY-MM-DD"),
                FieldError(field: "endDate", message: "must be a date written YYYY-MM-DD"),
            ]
        )
    }
}

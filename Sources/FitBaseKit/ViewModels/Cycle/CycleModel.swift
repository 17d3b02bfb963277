import FitBaseCore
import Foundation
import Observation

/// The cycle screen (seed 001): a month grid (logged periods, predicted phases, the 80 % range of the next period,
/// today), month navigation, the current phase card and period logging — the grid updates once a period is saved.
@MainActor @Observable
public final class CycleModel {
    /// The period form's answers.
    public struct PeriodDraft: Sendable, Equatable {
        /// The period's id when editing a logged one; `nil` for a new period.
        public var id: PeriodID?
        public var start: CalendarDay?
        public var end: CalendarDay?
        public var flow: PeriodFlow?
        public var symptoms: Set<String>
        public var notes: String

        /// An empty form (or a logged period to edit).
        public init(id: PeriodID? = nil, start: CalendarDay? = nil, end: CalendarDay? = nil, flow: PeriodFlow? = nil, symptoms: Set<String> = [], notes: String = "") {
            self.id = id
            self.start = start
            self.end = end
            self.flow = flow
            self.symptoms = symptoms
            self.notes = notes
        }
    }

    /// The symptoms the form offers.
    public static let symptomChoices = ["cramps", "headache", "bloating", "fatigue", "mood swings", "back pain", "tender breasts", "acne"]

    /// The month showing.
    public private(set) var year: Int
    public private(set) var month: Int
    /// Its days (`nil` until loaded).
    public private(set) var calendar: CycleMonth?
    /// Today's phase card (`nil` until a period is logged or the profile has a last period start).
    public private(set) var current: CurrentCycle?
    /// What the history predicts (`nil` until a period is logged).
    public private(set) var forecast: CycleForecast?
    /// Logged periods, newest first.
    public private(set) var periods: [Period] = []
    public private(set) var isLoading = false
    public private(set) var error: ScreenError?
    /// The period form's answers; `nil` while the form is closed.
    public var draft: PeriodDraft?
    /// The form's problems per field (`start`, `end`).
    public private(set) var fieldErrors: [String: String] = [:]
    public private(set) var isSaving = false

    private let cycle: any CycleService
    private let analytics: any AnalyticsService
    private let clock: any KitClock
    private let timeZone: TimeZone
    @ObservationIgnored private var generation = LoadGeneration()

    /// A model over the services of `dependencies`, showing the current month of `timeZone`.
    public init(dependencies: FitBaseDependencies, timeZone: TimeZone = .current) {
        cycle = dependencies.cycle
        analytics = dependencies.analytics
        clock = dependencies.clock
        self.timeZone = timeZone
        let today = CalendarDay(dependencies.clock.now, in: timeZone).components
        year = today.year
        month = today.month
    }

    /// Today.
    public var today: CalendarDay { CalendarDay(clock.now, in: timeZone) }

    /// Nothing logged yet and no last period start in the profile: show the "log your first period" state instead of
    /// the phase card.
    public var isEmpty: Bool { calendar != nil && periods.isEmpty && current == nil }

    /// The grid's rows, Monday first; `nil` pads the days before the 1st and after the last day.
    public var weeks: [[CycleCalendarDay?]] {
        guard let days = calendar?.days, let first = days.first else { return [] }
        var cells: [CycleCalendarDay?] = Array(repeating: nil, count: Self.mondayIndex(of: first.day)) + days.map(Optional.some)
        while cells.count % 7 != 0 { cells.append(nil) }
        return stride(from: 0, to: cells.count, by: 7).map { Array(cells[$0..<$0 + 7]) }
    }

    /// 0 for Monday … 6 for Sunday (1970-01-01 was a Thursday).
    static func mondayIndex(of day: CalendarDay) -> Int {
        ((day.daysSince1970 + 3) % 7 + 7) % 7
    }

    /// Loads the month showing, today's phase, the forecast and the periods.
    public func load() async {
        let ticket = generation.next()
        isLoading = true
        let (shownYear, shownMonth) = (year, month)
        do throws(KitError) {
            let grid = try await cycle.month(year: shownYear, month: shownMonth)
            let current = try await cycle.current()
            let forecast = try await cycle.forecast()
            let periods = try await cycle.periods()
            guard generation.isCurrent(ticket) else { return }
            calendar = grid
            self.current = current
            self.forecast = forecast
            self.periods = periods.reversed()
            error = nil
        } catch {
            guard generation.isCurrent(ticket) else { return }
            present(error)
        }
        isLoading = false
    }

    /// Shows the month before and loads it.
    public func previousMonth() async {
        (year, month) = month == 1 ? (year - 1, 12) : (year, month - 1)
        await load()
    }

    /// Shows the month after and loads it.
    public func nextMonth() async {
        (year, month) = month == 12 ? (year + 1, 1) : (year, month + 1)
        await load()
    }

    /// Jumps back to the month of today.
    public func showToday() async {
        let now = today.components
        (year, month) = (now.year, now.month)
        await load()
    }

    /// Opens the period form starting on `day` (today by default).
    public func startLogging(on day: CalendarDay? = nil) {
        draft = PeriodDraft(start: day ?? today)
        fieldErrors = [:]
    }

    /// Opens the form on a logged period.
    public func edit(_ period: Period) {
        draft = PeriodDraft(id: period.id, start: period.start, end: period.end, flow: period.flow, symptoms: Set(period.symptoms), notes: period.notes ?? "")
        fieldErrors = [:]
    }

    /// Closes the form without saving.
    public func cancelLogging() {
        draft = nil
        fieldErrors = [:]
    }

    /// The form's problems by its fields (`start`, `end`, `flow`): ``PeriodRules``, as the server checks them; empty
    /// when it may be saved.
    public func problems(of draft: PeriodDraft) -> [String: String] {
        guard let period = period(of: draft) else { return ["start": "Choose the first day."] }
        let names = ["startDate": "start", "endDate": "end"]
        do throws(InvalidFields) {
            _ = try PeriodRules.checked(FitBaseCore.PeriodDraft(period), id: period.id, today: today)
            return [:]
        } catch {
            return Dictionary(error.errors.map { (names[$0.field] ?? $0.field, $0.message) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// The period the form's answers make; `nil` without a first day.
    private func period(of draft: PeriodDraft) -> Period? {
        guard let start = draft.start else { return nil }
        let notes = draft.notes.trimmingCharacters(in: .whitespacesAndNewlines)
        return Period(
            id: draft.id ?? PeriodID(), start: start, end: draft.end, flow: draft.flow, symptoms: draft.symptoms.sorted(), notes: notes.isEmpty ? nil : notes
        )
    }

    /// Saves the form (a new period or changes to a logged one); the grid and phase card reload.
    public func savePeriod() async {
        guard let draft else { return }
        fieldErrors = problems(of: draft)
        guard fieldErrors.isEmpty, let period = period(of: draft) else {
            error = .invalid(fieldErrors)
            return
        }
        isSaving = true
        defer { isSaving = false }
        do throws(KitError) {
            if draft.id == nil {
                _ = try await cycle.logPeriod(period)
                analytics.track(.periodLogged)
            } else {
                _ = try await cycle.updatePeriod(period)
            }
            self.draft = nil
            error = nil
        } catch {
            present(error)
            return
        }
        await load()
    }

    /// Logs a fertility signal (an LH test, a temperature, cervical mucus) and reloads: a detected ovulation moves the
    /// forecast and the phases at once. Problems of the signal land in ``fieldErrors`` by field (`date`, `result`, `value`).
    public func logSignal(_ signal: FertilitySignal) async {
        isSaving = true
        defer { isSaving = false }
        do throws(KitError) {
            _ = try await cycle.logSignal(signal)
            fieldErrors = [:]
            error = nil
        } catch {
            return present(error)
        }
        await load()
    }

    /// Deletes a logged period and reloads.
    public func delete(_ period: Period) async {
        do throws(KitError) {
            try await cycle.deletePeriod(id: period.id)
        } catch {
            return present(error)
        }
        await load()
    }

    private func present(_ failure: KitError) {
        isLoading = false
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        fieldErrors = failure.fieldErrors
        analytics.track(.operationFailed(feature: .cycle, reason: failure.kind))
    }
}

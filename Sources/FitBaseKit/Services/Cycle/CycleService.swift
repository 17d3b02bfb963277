import FitBaseCore
import Foundation

/// Where today falls in the user's cycle.
public struct CurrentCycle: Sendable, Equatable {
    /// Today's phase.
    public var phase: CyclePhase
    /// 1-based day of the cycle.
    public var cycleDay: Int
    /// Days until the next phase (0 when the period is late and could start any day).
    public var daysUntilNextPhase: Int
    /// The phase that comes next.
    public var nextPhase: CyclePhase
    /// The cycle has run past its expected length without a logged period.
    public var isLate: Bool
    /// How much the prediction can be trusted (how many cycles it rests on, how regular they are).
    public var confidence: CyclePredictor.Confidence
    /// The phase's one-line guidance.
    public var guidance: String { phase.guidance }

    /// Makes a value.
    public init(phase: CyclePhase, cycleDay: Int, daysUntilNextPhase: Int, nextPhase: CyclePhase, isLate: Bool, confidence: CyclePredictor.Confidence) {
        self.phase = phase
        self.cycleDay = cycleDay
        self.daysUntilNextPhase = daysUntilNextPhase
        self.nextPhase = nextPhase
        self.isLate = isLate
        self.confidence = confidence
    }
}

/// What the cycle's history predicts.
public struct CycleForecast: Sendable, Equatable {
    /// The most likely first day of the next period.
    public var nextPeriodStart: CalendarDay
    /// The days the next period starts within, 8 times out of 10 (an 80 % range).
    public var nextPeriodRange: ClosedRange<CalendarDay>
    /// The estimated ovulation day.
    public var ovulationDate: CalendarDay
    /// The fertile window around it.
    public var fertileWindow: ClosedRange<CalendarDay>
    /// How much the prediction can be trusted.
    public var confidence: CyclePredictor.Confidence
    /// Irregular, infrequent, frequent or prolonged cycles (FIGO 2018), to suggest seeing a clinician.
    public var patterns: Set<CyclePredictor.Pattern>
    /// Complete cycles the prediction rests on.
    public var cyclesUsed: Int
    /// Their mean length in days.
    public var meanCycleLength: Double
    /// Whether ``ovulationDate`` was detected from the cycle's LH tests or temperatures, or only estimated.
    public var ovulationSource: CyclePredictor.OvulationSource
    /// The rule that produced ``nextPeriodStart``: a detected ovulation plus the luteal phase, or the cycle lengths.
    public var method: CyclePredictor.Method

    /// Makes a forecast.
    public init(
        nextPeriodStart: CalendarDay, nextPeriodRange: ClosedRange<CalendarDay>, ovulationDate: CalendarDay, fertileWindow: ClosedRange<CalendarDay>,
        confidence: CyclePredictor.Confidence, patterns: Set<CyclePredictor.Pattern>, cyclesUsed: Int, meanCycleLength: Double,
        ovulationSource: CyclePredictor.OvulationSource = .estimated, method: CyclePredictor.Method = .cycleHistory
    ) {
        self.ovulationSource = ovulationSource
        self.method = method
        self.nextPeriodStart = nextPeriodStart
        self.nextPeriodRange = nextPeriodRange
        self.ovulationDate = ovulationDate
        self.fertileWindow = fertileWindow
        self.confidence = confidence
        self.patterns = patterns
        self.cyclesUsed = cyclesUsed
        self.meanCycleLength = meanCycleLength
    }
}

/// One day of the cycle calendar.
public struct CycleCalendarDay: Sendable, Equatable, Hashable, Identifiable {
    /// The day.
    public var day: CalendarDay
    /// Its phase, when the cycle is known that far (`nil` before the first logged period, or before the profile's last
    /// period start while none is logged).
    public var phase: CyclePhase?
    /// A logged period covers it.
    public var isPeriod: Bool
    /// The next period is predicted to start within the 80 % range covering it.
    public var isPredictedPeriod: Bool
    /// Within the predicted fertile window.
    public var isFertile: Bool
    /// The predicted ovulation day.
    public var isOvulation: Bool
    /// Its phase is a prediction (after today), not a record.
    public var isPredicted: Bool
    /// It is today.
    public var isToday: Bool

    public var id: CalendarDay { day }

    /// Makes a calendar day.
    public init(
        day: CalendarDay, phase: CyclePhase?, isPeriod: Bool, isPredictedPeriod: Bool, isFertile: Bool, isOvulation: Bool, isPredicted: Bool,
        isToday: Bool
    ) {
        self.day = day
        self.phase = phase
        self.isPeriod = isPeriod
        self.isPredictedPeriod = isPredictedPeriod
        self.isFertile = isFertile
        self.isOvulation = isOvulation
        self.isPredicted = isPredicted
        self.isToday = isToday
    }
}

/// A month of the cycle calendar.
public struct CycleMonth: Sendable, Equatable {
    /// The year.
    public var year: Int
    /// The month, 1…12.
    public var month: Int
    /// Every day of the month, in order.
    public var days: [CycleCalendarDay]

    /// Makes a month.
    public init(year: Int, month: Int, days: [CycleCalendarDay]) {
        self.year = year
        self.month = month
        self.days = days
    }
}

/// Cycle tracking (seed 001): logged periods (offline-first), today's phase, predictions and the month calendar.
/// Logging, editing or deleting a period changes what the other calls answer at once, offline too. Until a period is
/// logged, the profile's last period start (the onboarding's answer) stands for one, as on the server: the cycle screen
/// shows the phase Today shows (``CycleReckoning``).
public protocol CycleService: Sendable {
    /// Every logged period, oldest first.
    func periods() async throws(KitError) -> [Period]
    /// Logs a period (saved on the device at once, sent with the next sync); returns it as saved.
    func logPeriod(_ period: Period) async throws(KitError) -> Period
    /// Saves changes to a logged period.
    func updatePeriod(_ period: Period) async throws(KitError) -> Period
    /// Deletes a logged period.
    func deletePeriod(id: PeriodID) async throws(KitError)
    /// Every logged fertility signal (LH tests, temperatures, cervical mucus), oldest first.
    func signals() async throws(KitError) -> [FertilitySignal]
    /// Logs a fertility signal, checked by the server's rules (saved on the device at once, sent with the next sync);
    /// a detected ovulation moves the forecast and the phases at once.
    func logSignal(_ signal: FertilitySignal) async throws(KitError) -> FertilitySignal
    /// Deletes a logged fertility signal.
    func deleteSignal(id: FertilitySignalID) async throws(KitError)
    /// Where today falls; `nil` until a period is logged or the profile has a last period start.
    func current() async throws(KitError) -> CurrentCycle?
    /// What the history predicts; `nil` until a period is logged or the profile has a last period start.
    func forecast() async throws(KitError) -> CycleForecast?
    /// The calendar of month `month` (1…12) of `year`.
    func month(year: Int, month: Int) async throws(KitError) -> CycleMonth
}

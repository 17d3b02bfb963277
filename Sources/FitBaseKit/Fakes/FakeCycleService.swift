import FitBaseCore
import Foundation

/// An in-memory ``CycleService`` that predicts with FitBase's own ``CycleReckoning``: logging, editing or deleting a
/// period changes today's phase, the forecast and the month grid at once. Over a profile fake, it reads the profile's
/// average lengths and last period start at every call, as the live service does: an edit shows at once.
public actor FakeCycleService: CycleService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case periods, logPeriod, updatePeriod, deletePeriod, signals, logSignal, deleteSignal, current, forecast, month
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeCycleService")
    private let clock: any KitClock
    private let timeZone: TimeZone
    private let profile: FakeProfileService?
    /// The profile's answers when there is no profile fake.
    private let fixedProfile: Profile
    private var stored: [Period]
    private var storedSignals: [FertilitySignal]

    /// A fake starting with `periods` and fertility `signals`, predicting from the signed-in profile of `profile` — or,
    /// without one, from a profile of these average cycle and period lengths and last period start.
    public init(
        periods: [Period] = [], signals: [FertilitySignal] = [], profile: FakeProfileService? = nil, averageCycleLength: Int = 28,
        averagePeriodLength: Int = 5, lastPeriodStart: CalendarDay? = nil, timeZone: TimeZone = .gmt, clock: any KitClock = SystemKitClock()
    ) {
        self.stored = periods
        self.storedSignals = signals
        self.clock = clock
        self.timeZone = timeZone
        self.profile = profile
        self.fixedProfile = Profile(
            averageCycleLength: averageCycleLength, averagePeriodLength: averagePeriodLength, lastPeriodStartDate: lastPeriodStart?.description)
    }

    private var today: CalendarDay { CalendarDay(clock.now, in: timeZone) }

    /// The profile the prediction reads: the profile fake's signed-in one, as the server reads it.
    private var cycleProfile: Profile {
        get async {
            guard let profile else { return fixedProfile }
            return await profile.signedInProfile ?? Profile()
        }
    }

    /// The prediction for today, read by the other fakes as the server's services read it (not an operation).
    var prediction: CyclePredictor.Prediction? {
        get async { CycleReckoning.prediction(logged: stored, signals: storedSignals, profile: await cycleProfile, on: today) }
    }

    public func periods() async throws(KitError) -> [Period] {
        try await knobs.enter(.periods, clock: clock)
        return stored.sorted { ($0.start, $0.id.description) < ($1.start, $1.id.description) }
    }

    public func logPeriod(_ period: Period) async throws(KitError) -> Period {
        try await knobs.enter(.logPeriod, clock: clock)
        let checked = try check(period)
        stored.removeAll { $0.id == checked.id }
        stored.append(checked)
        return checked
    }

    public func updatePeriod(_ period: Period) async throws(KitError) -> Period {
        try await knobs.enter(.updatePeriod, clock: clock)
        guard stored.contains(where: { $0.id == period.id }) else { throw KitError(.notFound, message: "This period is no longer logged.") }
        let checked = try check(period)
        stored.removeAll { $0.id == checked.id }
        stored.append(checked)
        return checked
    }

    public func deletePeriod(id: PeriodID) async throws(KitError) {
        try await knobs.enter(.deletePeriod, clock: clock)
        stored.removeAll { $0.id == id }
    }

    public func signals() async throws(KitError) -> [FertilitySignal] {
        try await knobs.enter(.signals, clock: clock)
        return storedSignals.sorted { ($0.date, $0.id.description) < ($1.date, $1.id.description) }
    }

    public func logSignal(_ signal: FertilitySignal) async throws(KitError) -> FertilitySignal {
        try await knobs.enter(.logSignal, clock: clock)
        let checked = try LiveCycleService.check(signal, today: today)
        storedSignals.removeAll { $0.id == checked.id }
        storedSignals.append(checked)
        return checked
    }

    public func deleteSignal(id: FertilitySignalID) async throws(KitError) {
        try await knobs.enter(.deleteSignal, clock: clock)
        storedSignals.removeAll { $0.id == id }
    }

    public func current() async throws(KitError) -> CurrentCycle? {
        try await knobs.enter(.current, clock: clock)
        return await currentCycle
    }

    /// Today's place in the cycle, read by the other fakes as the server's services read it: not through an operation
    /// of this service, so its knobs neither fail nor count it.
    var currentCycle: CurrentCycle? {
        get async {
            guard let prediction = await prediction else { return nil }
            let today = prediction.today
            return CurrentCycle(
                phase: today.phase, cycleDay: today.cycleDay, daysUntilNextPhase: today.daysUntilNextPhase, nextPhase: today.nextPhase,
                isLate: today.isLate, confidence: prediction.confidence
            )
        }
    }

    public func forecast() async throws(KitError) -> CycleForecast? {
        try await knobs.enter(.forecast, clock: clock)
        return await prediction.map(CycleForecast.init)
    }

    public func month(year: Int, month: Int) async throws(KitError) -> CycleMonth {
        try await knobs.enter(.month, clock: clock)
        guard (1...12).contains(month) else { throw KitError(.invalidInput, fieldErrors: ["month": "must be 1 to 12"]) }
        let profile = await cycleProfile
        let prediction = CycleReckoning.prediction(logged: stored, signals: storedSignals, profile: profile, on: today)
        return CycleMonth.build(
            year: year, month: month, periods: stored, prediction: prediction, today: today, defaultPeriodLength: profile.averagePeriodLength)
    }

    /// The period as the server's rules keep it (dates checked against today, symptoms trimmed); a start another
    /// period already has is a conflict.
    private func check(_ period: Period) throws(KitError) -> Period {
        let checked: Period
        do throws(InvalidFields) {
            checked = try PeriodRules.checked(PeriodDraft(period), id: period.id, today: today)
        } catch {
            throw KitError(error)
        }
        if PeriodRules.clashes(checked, with: stored) {
            throw KitError(.conflict, message: "A period starting that day is already logged.", code: .periodExists)
        }
        return checked
    }
}

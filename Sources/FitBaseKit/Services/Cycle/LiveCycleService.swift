import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``CycleService`` over the synced `cycleLogs` and `cycleSignals` collections: periods and fertility signals are read
/// and written on the device (offline, sealed at rest) and reach the server with the next sync; today's phase, the
/// forecast and the calendar are computed on the device with FitBase's ``CyclePredictor`` — the same rules the server
/// runs, a detected ovulation included — from the profile's averages.
public struct LiveCycleService: CycleService {
    let engine: SyncEngine
    let profile: ProfileAverages
    let clock: any KitClock
    let timeZone: @Sendable () -> TimeZone

    private var today: CalendarDay { CalendarDay(clock.now, in: timeZone()) }

    public func periods() async throws(KitError) -> [Period] {
        try await storage { try await engine.cycle.periods() }
    }

    public func logPeriod(_ period: Period) async throws(KitError) -> Period {
        let checked = try check(period, existing: try await periods())
        try await storage { try await engine.cycle.save(checked) }
        return checked
    }

    public func updatePeriod(_ period: Period) async throws(KitError) -> Period {
        let existing = try await periods()
        guard existing.contains(where: { $0.id == period.id }) else { throw KitError(.notFound, message: "This period is no longer logged.") }
        let checked = try check(period, existing: existing)
        try await storage { try await engine.cycle.save(checked) }
        return checked
    }

    public func deletePeriod(id: PeriodID) async throws(KitError) {
        try await storage { try await engine.cycle.delete(id) }
    }

    public func signals() async throws(KitError) -> [FertilitySignal] {
        try await storage { try await engine.fertilitySignals.signals() }
    }

    public func logSignal(_ signal: FertilitySignal) async throws(KitError) -> FertilitySignal {
        let checked = try Self.check(signal, today: today)
        try await storage { try await engine.fertilitySignals.save(checked) }
        return checked
    }

    public func deleteSignal(id: FertilitySignalID) async throws(KitError) {
        try await storage { try await engine.fertilitySignals.delete(id) }
    }

    /// The signal as the server's rules keep it (its date not after today, temperatures in range).
    static func check(_ signal: FertilitySignal, today: CalendarDay) throws(KitError) -> FertilitySignal {
        let draft = FertilitySignalDraft(date: signal.date.description, type: signal.type.rawValue, result: signal.result, value: signal.celsius)
        do throws(InvalidFields) { return try FertilitySignalRules.checked(draft, id: signal.id, today: today) } catch { throw KitError(error) }
    }

    public func current() async throws(KitError) -> CurrentCycle? {
        guard let prediction = try await prediction() else { return nil }
        let today = prediction.today
        return CurrentCycle(
            phase: today.phase, cycleDay: today.cycleDay, daysUntilNextPhase: today.daysUntilNextPhase, nextPhase: today.nextPhase, isLate: today.isLate,
            confidence: prediction.confidence
        )
    }

    public func forecast() async throws(KitError) -> CycleForecast? {
        try await prediction().map(CycleForecast.init)
    }

    public func month(year: Int, month: Int) async throws(KitError) -> CycleMonth {
        guard (1...12).contains(month) else { throw KitError(.invalidInput, fieldErrors: ["month": "must be 1 to 12"]) }
        let periods = try await periods()
        let signals = try await signals()
        let averages = await profile.averages()
        return CycleMonth.build(
            year: year, month: month, periods: periods, prediction: Self.predict(periods, signals: signals, averages: averages, today: today), today: today,
            defaultPeriodLength: averages.period
        )
    }

    private func prediction() async throws(KitError) -> CyclePredictor.Prediction? {
        Self.predict(try await periods(), signals: try await signals(), averages: await profile.averages(), today: today)
    }

    private static func predict(
        _ periods: [Period], signals: [FertilitySignal], averages: (cycle: Int, period: Int), today: CalendarDay
    ) -> CyclePredictor.Prediction? {
        CyclePredictor(profileCycleLength: averages.cycle, profilePeriodLength: averages.period)
            .predict(periods: periods.map { CyclePredictor.Period(start: $0.start, end: $0.end) }, signals: signals.filter { $0.date <= today }, today: today)
    }

    /// The period as the server's rules keep it; a start another period already has is a conflict.
    private func check(_ period: Period, existing: [Period]) throws(KitError) -> Period {
        let checked: Period
        do throws(InvalidFields) { checked = try PeriodRules.checked(PeriodDraft(period), id: period.id, today: today) } catch { throw KitError(error) }
        if PeriodRules.clashes(checked, with: existing) {
            throw KitError(.conflict, message: "A period starting that day is already logged.", code: .periodExists)
        }
        return checked
    }
}

/// The profile's average cycle and period lengths, read through the cache (the defaults, 28 and 5, until known).
struct ProfileAverages: Sendable {
    let cache: ResponseCache

    func averages() async -> (cycle: Int, period: Int) {
        guard let loaded = try? await cache.get("/v1/me", operationID: "getMe", key: "me", ttl: .seconds(3_600), policy: .cacheFirst),
            let user = try? WireCoding.decode(Components.Schemas.User.self, from: loaded.value)
        else { return (28, 5) }
        return (user.averageCycleLength, user.averagePeriodLength)
    }
}

import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``CycleService`` over the synced `cycleLogs` and `cycleSignals` collections: periods and fertility signals are read
/// and written on the device (offline, sealed at rest) and reach the server with the next sync; today's phase, the
/// forecast and the calendar are computed on the device by ``CycleReckoning`` — the rule the server's cycle and Today
/// answers run, a detected ovulation included — from the profile's average lengths and, until a period is logged, its
/// last period start (the onboarding's answer). A change here marks the recommendations kept on the device as old.
public struct LiveCycleService: CycleService {
    let engine: SyncEngine
    let profile: CycleProfile
    let recommendations: RecommendationInputs
    let clock: any KitClock
    let timeZone: @Sendable () -> TimeZone

    private var today: CalendarDay { CalendarDay(clock.now, in: timeZone()) }

    public func periods() async throws(KitError) -> [Period] {
        try await storage { try await engine.cycle.periods() }
    }

    public func logPeriod(_ period: Period) async throws(KitError) -> Period {
        let checked = try check(period, existing: try await periods())
        try await storage { try await engine.cycle.save(checked) }
        await recommendations.changed()
        return checked
    }

    public func updatePeriod(_ period: Period) async throws(KitError) -> Period {
        let existing = try await periods()
        guard existing.contains(where: { $0.id == period.id }) else { throw KitError(.notFound, message: "This period is no longer logged.") }
        let checked = try check(period, existing: existing)
        try await storage { try await engine.cycle.save(checked) }
        await recommendations.changed()
        return checked
    }

    public func deletePeriod(id: PeriodID) async throws(KitError) {
        try await storage { try await engine.cycle.delete(id) }
        await recommendations.changed()
    }

    public func signals() async throws(KitError) -> [FertilitySignal] {
        try await storage { try await engine.fertilitySignals.signals() }
    }

    public func logSignal(_ signal: FertilitySignal) async throws(KitError) -> FertilitySignal {
        let checked = try Self.check(signal, today: today)
        try await storage { try await engine.fertilitySignals.save(checked) }
        await recommendations.changed()
        return checked
    }

    public func deleteSignal(id: FertilitySignalID) async throws(KitError) {
        try await storage { try await engine.fertilitySignals.delete(id) }
        await recommendations.changed()
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
        let profile = await profile.current()
        let today = today
        return CycleMonth.build(
            year: year, month: month, periods: periods,
            prediction: CycleReckoning.prediction(logged: periods, signals: signals, profile: profile, on: today), today: today,
            defaultPeriodLength: profile.averagePeriodLength
        )
    }

    private func prediction() async throws(KitError) -> CyclePredictor.Prediction? {
        CycleReckoning.prediction(logged: try await periods(), signals: try await signals(), profile: await profile.current(), on: today)
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

/// The profile's cycle answers — average cycle and period lengths, the last period start — read through ``getMe`` each
/// time the server is reachable, so an edit made in the profile shows on the cycle screen at once; the device's copy
/// of the last answer when it is not; the defaults (28 and 5 days, no start) before any answer.
struct CycleProfile: Sendable {
    let cache: ResponseCache

    func current() async -> Profile {
        let client = cache.client
        let loaded = try? await cache.load(Components.Schemas.User.self, key: "me", ttl: .zero, policy: .revalidate) { _ async throws(FitBaseError) in
            .fresh(try await client.call { try await client.api.getMe().ok.body.json }, etag: nil)
        }
        return loaded.map { Profile(wire: $0.value) } ?? Profile()
    }
}

import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import HTTPTypes

/// ``RecommendationService`` over `/v1/recommendations`, cache-first per day and energy answer.
public struct LiveRecommendationService: RecommendationService {
    let api: ServerAPI
    let cache: ResponseCache
    let ttl: Duration
    let clock: any KitClock
    let timeZone: @Sendable () -> TimeZone

    private func key(_ energy: EnergyLevel?) -> String {
        "recommendations:\(CalendarDay(clock.now, in: timeZone())):\(energy?.rawValue ?? "any")"
    }

    public func today(energy: EnergyLevel?, policy: CachePolicy) async throws(KitError) -> Loaded<TodayRecommendations> {
        let query = energy.map { [URLQueryItem(name: "energy", value: $0.rawValue)] } ?? []
        let loaded = try await cache.get(
            "/v1/recommendations/today", query: query, operationID: "getTodayRecommendations", key: key(energy), ttl: ttl, policy: policy)
        let value = try TodayRecommendations(wire: WireCoding.decode(Components.Schemas.DailyRecommendations.self, from: loaded.value))
        return loaded.map { _ in value }
    }

    public func refresh(energy: EnergyLevel?) async throws(KitError) -> TodayRecommendations {
        let path = "/v1/recommendations/refresh" + (energy.map { "?energy=\($0.rawValue)" } ?? "")
        let wire = try await api.send(.post, path, json: ServerAPI.Empty(), as: Components.Schemas.DailyRecommendations.self, operationID: "refreshRecommendations")
        if let body = try? WireCoding.encoder.encode(wire) { await cache.put(body, key: key(energy)) }
        return try TodayRecommendations(wire: wire)
    }

    public func week(policy: CachePolicy) async throws(KitError) -> Loaded<WeekRecommendations> {
        let loaded = try await cache.get(
            "/v1/recommendations/week", operationID: "getWeekRecommendations", key: "recommendations:week:\(CalendarDay(clock.now, in: timeZone()))", ttl: ttl,
            policy: policy)
        let value = try WeekRecommendations(wire: WireCoding.decode(Components.Schemas.WeekRecommendations.self, from: loaded.value))
        return loaded.map { _ in value }
    }
}

extension TodayRecommendations {
    init(wire: Components.Schemas.DailyRecommendations) throws(KitError) {
        guard let day = CalendarDay(wire.date) else { throw KitError(.server) }
        self.init(
            day: day, phase: wire.phase, cycleDay: wire.cycleDay, energy: wire.energy,
            workouts: wire.recommendations.compactMap { item in
                CatalogWorkout(wire: item.workout).map { RecommendedWorkout(priority: item.priority, reason: item.reason, workout: $0) }
            },
            guidance: wire.phaseGuidance, lowEnergyAlternative: wire.alternativeIfLowEnergy.flatMap(CatalogWorkout.init(wire:)),
            source: wire.source.rawValue, generatedAt: wire.generatedAt
        )
    }
}

extension WeekRecommendations {
    init(wire: Components.Schemas.WeekRecommendations) throws(KitError) {
        guard let start = CalendarDay(wire.startDate) else { throw KitError(.server) }
        var days: [WeekPlanDay] = []
        for day in wire.days {
            guard let date = CalendarDay(day.date) else { throw KitError(.server) }
            var workout: CatalogWorkout?
            if let item = day.workout {
                guard let known = CatalogWorkout(wire: item) else { throw KitError(.server) }
                workout = known
            }
            guard workout == nil || !day.isRestDay else { throw KitError(.server) }
            days.append(WeekPlanDay(date: date, phase: day.phase, cycleDay: day.cycleDay, isPredicted: day.predicted, note: day.note, workout: workout))
        }
        self.init(startDate: start, days: days, source: wire.source.rawValue)
    }
}

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

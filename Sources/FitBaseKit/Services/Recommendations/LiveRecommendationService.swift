import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``RecommendationService`` over ``getTodayRecommendations``, ``refreshRecommendations`` and
/// ``getWeekRecommendations``, cache-first per day and energy answer. A period, a fertility signal or a workout logged
/// on the device since an answer was kept makes the next load ask the server again, after sending it
/// (``RecommendationInputs``).
public struct LiveRecommendationService: RecommendationService {
    let cache: ResponseCache
    let inputs: RecommendationInputs
    let ttl: Duration
    let clock: any KitClock
    let timeZone: @Sendable () -> TimeZone

    private var client: FitBaseClient { cache.client }

    private func key(_ energy: EnergyLevel?) -> String {
        "recommendations:\(CalendarDay(clock.now, in: timeZone())):\(energy?.rawValue ?? "any")"
    }

    public func today(energy: EnergyLevel?, policy: CachePolicy) async throws(KitError) -> Loaded<TodayRecommendations> {
        let key = key(energy)
        let client = client
        return try await cache.load(TodayRecommendations.self, key: key, ttl: ttl, policy: await asked(policy, key: key)) { etag async throws(FitBaseError) in
            await inputs.send()
            return try await client.call {
                let output = try await client.api.getTodayRecommendations(query: .init(energy: energy), headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return .notModified }
                let ok = try output.ok
                return .fresh(try ContractJSON.record(TodayRecommendations.self, from: try ok.body.json), etag: ok.headers.eTag)
            }
        }
    }

    public func refresh(energy: EnergyLevel?) async throws(KitError) -> TodayRecommendations {
        let client = client
        await inputs.send()
        let fresh = try await kit { () async throws(FitBaseError) in
            let answer = try await client.call { try await client.api.refreshRecommendations(query: .init(energy: energy)).ok.body.json }
            return try ContractJSON.record(TodayRecommendations.self, from: answer)
        }
        await cache.put(fresh, key: key(energy))
        return fresh
    }

    public func week(policy: CachePolicy) async throws(KitError) -> Loaded<WeekRecommendations> {
        let key = "recommendations:week:\(CalendarDay(clock.now, in: timeZone()))"
        let client = client
        let loaded = try await cache.load(
            Components.Schemas.WeekRecommendations.self, key: key, ttl: ttl, policy: await asked(policy, key: key)
        ) { etag async throws(FitBaseError) in
            await inputs.send()
            return try await client.call {
                let output = try await client.api.getWeekRecommendations(headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return .notModified }
                let ok = try output.ok
                return .fresh(try ok.body.json, etag: ok.headers.eTag)
            }
        }
        let value = try WeekRecommendations(wire: loaded.value)
        return loaded.map { _ in value }
    }

    /// `policy`, or — when what the answer under `key` rests on changed on the device since it was kept — asking the
    /// server again (the kept answer still shows when it cannot be reached).
    private func asked(_ policy: CachePolicy, key: String) async -> CachePolicy {
        guard policy == .cacheFirst, await inputs.outdate(key) else { return policy }
        return .revalidate
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

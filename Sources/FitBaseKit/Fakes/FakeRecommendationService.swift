import FitBaseCore
import Foundation

/// An in-memory ``RecommendationService`` that picks from the catalog fake by today's phase (from the cycle fake),
/// the phase's recommended types and intensity, and the reported energy; premium workouts only when entitled. The week
/// is laid out by FitBase's own ``WeekPlanner`` over the cycle fake's prediction and the profile fake's level, goals,
/// types and equipment.
public actor FakeRecommendationService: RecommendationService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case today, refresh, week
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeRecommendationService")
    private let clock: any KitClock
    private let timeZone: TimeZone
    private let cycle: FakeCycleService?
    private let catalog: FakeCatalogService
    private let billing: FakeBillingService?
    private let profile: FakeProfileService?

    /// A fake recommending from `catalog` for the phase `cycle` knows today (none: no cycle tracking), for the user of
    /// `profile` (none: no level, goals or equipment known).
    public init(
        catalog: FakeCatalogService, cycle: FakeCycleService? = nil, billing: FakeBillingService? = nil, profile: FakeProfileService? = nil,
        timeZone: TimeZone = .gmt, clock: any KitClock = SystemKitClock()
    ) {
        self.catalog = catalog
        self.cycle = cycle
        self.billing = billing
        self.profile = profile
        self.timeZone = timeZone
        self.clock = clock
    }

    public func today(energy: EnergyLevel?, policy: CachePolicy) async throws(KitError) -> Loaded<TodayRecommendations> {
        try await knobs.enter(.today, clock: clock)
        return Loaded(await make(energy: energy), source: policy == .cacheOnly ? .cache : .server, fetchedAt: clock.now)
    }

    public func refresh(energy: EnergyLevel?) async throws(KitError) -> TodayRecommendations {
        try await knobs.enter(.refresh, clock: clock)
        return await make(energy: energy)
    }

    public func week(policy: CachePolicy) async throws(KitError) -> Loaded<WeekRecommendations> {
        try await knobs.enter(.week, clock: clock)
        let today = CalendarDay(clock.now, in: timeZone)
        let prediction = await cycle?.prediction
        let user = await profile?.signedInProfile
        let entitled = await catalog.premiumEntitled()
        let workouts = await catalog.catalog
        let context = RecommendationContext(
            phase: prediction?.today.phase, cycleDay: prediction?.today.cycleDay, isLate: prediction?.today.isLate ?? false,
            fitnessLevel: user?.fitnessLevel, goals: user?.goals ?? [], preferredTypes: user?.preferredWorkoutTypes ?? [],
            equipment: user?.availableEquipment.map(Set.init), isEntitledToPremium: entitled
        )
        let positions = (0..<7).map { prediction?.position(on: today.adding(days: $0)) }
        let days = WeekPlanner().plan(workouts, from: today, positions: positions, context: context).map { day in
            WeekPlanDay(
                date: day.date, phase: day.position?.phase, cycleDay: day.position?.cycleDay, isPredicted: day.date != today, note: day.note,
                workout: day.recommendation.map { FakeCatalogService.locking($0.workout, entitled: entitled) }
            )
        }
        return Loaded(WeekRecommendations(startDate: today, days: days, source: "rules"), source: policy == .cacheOnly ? .cache : .server, fetchedAt: clock.now)
    }

    private func make(energy: EnergyLevel?) async -> TodayRecommendations {
        let current = await cycle?.currentCycle
        let phase = current?.phase
        let premium = await billing?.requiresUpgrade(for: .premiumContent) == nil && billing != nil
        let workouts = await catalog.catalog.filter { premium || !$0.isPremium }
        let target: Intensity = energy == .low ? .low : phase?.recommendedIntensity ?? .medium
        let preferred = phase?.recommendedWorkoutTypes ?? [.strength, .pilates, .yoga]
        let scored = workouts.map { workout -> (CatalogWorkout, Int) in
            var score = 0
            if let phase, workout.phases.contains(phase) { score += 4 }
            if let rank = preferred.firstIndex(of: workout.type) { score += 3 - min(rank, 3) }
            if workout.intensity == target { score += 2 }
            if energy == .low, workout.intensity == .high { score -= 5 }
            return (workout, score)
        }
        .sorted { ($0.1, $1.0.title) > ($1.1, $0.0.title) }
        let top = scored.prefix(3).enumerated().map { index, pair in
            RecommendedWorkout(priority: index + 1, reason: Self.reason(pair.0, phase: phase, energy: energy), workout: pair.0)
        }
        let gentle = workouts.filter { $0.intensity == .low && !top.map(\.workout.id).contains($0.id) }
            .sorted { ($0.phases.contains(phase ?? .menstrual) ? 0 : 1, $0.durationMinutes) < ($1.phases.contains(phase ?? .menstrual) ? 0 : 1, $1.durationMinutes) }
        return TodayRecommendations(
            day: CalendarDay(clock.now, in: timeZone), phase: phase, cycleDay: current?.cycleDay, energy: energy, workouts: top,
            guidance: phase?.guidance ?? "Move in a way that feels good today.", lowEnergyAlternative: gentle.first, source: "rules", generatedAt: clock.now
        )
    }

    private static func reason(_ workout: CatalogWorkout, phase: CyclePhase?, energy: EnergyLevel?) -> String {
        if energy == .low { return "Gentle enough for a low-energy day." }
        if let phase, workout.phases.contains(phase) { return "Suits your \(phase.displayName.lowercased()) phase." }
        return "A good fit for your goals."
    }
}

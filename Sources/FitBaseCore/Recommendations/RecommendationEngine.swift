/// A workout the user did recently.
public struct RecentWorkout: Sendable, Hashable {
    public var workout: WorkoutID
    public var type: WorkoutType
    /// 0 is today, 1 yesterday, and so on.
    public var daysAgo: Int

    public init(workout: WorkoutID, type: WorkoutType, daysAgo: Int) {
        self.workout = workout
        self.type = type
        self.daysAgo = daysAgo
    }
}

/// Everything a day's recommendations depend on. The same context and catalog always give the same answer.
public struct RecommendationContext: Sendable, Equatable {
    /// `nil` without cycle data: recommendations then follow level, goals and preferences only.
    public var phase: CyclePhase?
    public var cycleDay: Int?
    public var isLate: Bool
    /// `nil` until answered; treated like a beginner for intensity and volume.
    public var fitnessLevel: FitnessLevel?
    public var goals: [FitnessGoal]
    public var preferredTypes: [WorkoutType]
    /// What the user did in the last couple of weeks.
    public var recentWorkouts: [RecentWorkout]
    /// How the user feels today, when they said.
    public var energy: EnergyLevel?
    /// What the user owns; `nil` means unknown (no workout is ruled out for equipment).
    public var equipment: Set<Equipment>?
    /// Whether premium workouts may be recommended.
    public var isEntitledToPremium: Bool
    /// Workouts already suggested today; a refresh leaves them out while there are others.
    public var alreadyShown: Set<WorkoutID>

    public init(
        phase: CyclePhase? = nil, cycleDay: Int? = nil, isLate: Bool = false, fitnessLevel: FitnessLevel? = nil,
        goals: [FitnessGoal] = [], preferredTypes: [WorkoutType] = [], recentWorkouts: [RecentWorkout] = [],
        energy: EnergyLevel? = nil, equipment: Set<Equipment>? = nil, isEntitledToPremium: Bool = false,
        alreadyShown: Set<WorkoutID> = []
    ) {
        self.phase = phase
        self.cycleDay = cycleDay
        self.isLate = isLate
        self.fitnessLevel = fitnessLevel
        self.goals = goals
        self.preferredTypes = preferredTypes
        self.recentWorkouts = recentWorkouts
        self.energy = energy
        self.equipment = equipment
        self.isEntitledToPremium = isEntitledToPremium
        self.alreadyShown = alreadyShown
    }

    /// The intensity today calls for: the phase's (medium without one), one step down to low on a low-energy day,
    /// one step up on a high-energy day, and never above medium for beginners or for a late period.
    public var targetIntensity: Intensity {
        var target = phase?.recommendedIntensity ?? .medium
        switch energy {
        case .low: target = .low
        case .high: target = target.stepUp
        case .medium, nil: break
        }
        if fitnessLevel == nil || fitnessLevel == .beginner || isLate { target = min(target, .medium) }
        return target
    }

    /// A stable text of every input except ``alreadyShown`` (sets sorted), for caching answers per context.
    public var canonicalDescription: String {
        [
            "phase=\(phase?.rawValue ?? "-")", "day=\(cycleDay.map(String.init) ?? "-")", "late=\(isLate)",
            "level=\(fitnessLevel?.rawValue ?? "-")", "goals=\(goals.map(\.rawValue).joined(separator: ","))",
            "types=\(preferredTypes.map(\.rawValue).joined(separator: ","))",
            "recent=\(recentWorkouts.map { "\($0.workout)/\($0.type.rawValue)/\($0.daysAgo)" }.sorted().joined(separator: ","))",
            "energy=\(energy?.rawValue ?? "-")",
            "equipment=\(equipment.map { $0.map(\.rawValue).sorted().joined(separator: ",") } ?? "-")",
            "premium=\(isEntitledToPremium)",
        ].joined(separator: ";")
    }
}

/// One recommended workout and why.
public struct Recommendation: Sendable, Equatable {
    public let workout: CatalogWorkout
    public let reason: String
    /// 1 is the best fit.
    public let priority: Int

    public init(workout: CatalogWorkout, reason: String, priority: Int) {
        self.workout = workout
        self.reason = reason
        self.priority = priority
    }
}

/// A day's answer: up to three ranked workouts, a word on the phase, and a gentler option.
public struct DailyRecommendations: Sendable, Equatable {
    public let recommendations: [Recommendation]
    public let phaseGuidance: String
    public let alternativeIfLowEnergy: CatalogWorkout?

    public init(recommendations: [Recommendation], phaseGuidance: String, alternativeIfLowEnergy: CatalogWorkout?) {
        self.recommendations = recommendations
        self.phaseGuidance = phaseGuidance
        self.alternativeIfLowEnergy = alternativeIfLowEnergy
    }
}

/// A workout with its rules score and the reason the score gives.
public struct ScoredWorkout: Sendable, Equatable {
    public let workout: CatalogWorkout
    public let score: Int
    public let reason: String
}

/// The rules behind recommendations (seed 001 section 5), deterministic for the same context and catalog.
///
/// Only workouts the user may do are considered: never premium without entitlement, never needing equipment the user
/// lacks. Each is scored (points in parentheses):
/// * phase: its type in the phase's table (30 for the first type, 4 less for each later one); the workout lists
///   the phase (20);
/// * intensity against ``RecommendationContext/targetIntensity``: same (25), one step off (5), two steps (−25);
/// * preferred type (15); each goal the type serves (6), short sessions (≤ 30 min) for `consistency` (6);
/// * level: beginners lose 15 for high intensity and 10 for sessions over 45 min, advanced users lose 8 for low
///   intensity unless the phase or energy calls for it; postpartum recovery loses 15 for high intensity;
/// * energy: on a low day, sessions over 30 min lose 8 and sessions of 20 min or less gain 4;
/// * variety: the same workout done `d` days ago loses `50 − 6d` (for d ≤ 7); the same type done in the last two
///   days loses 12, 8 or 4 (today, yesterday, the day before; at most 24); a different type from yesterday's gains 4;
/// * featured workouts gain 3.
///
/// Ties break on the workout id. The three picks are chosen greedily, each later pick losing 15 per earlier pick of
/// the same type, so a day's three are varied when the catalog allows. On a low-energy day only low-intensity
/// workouts are picked while at least three are eligible; workouts already shown today are left out while at least
/// three others are, so a refresh brings new ones.
public struct RecommendationEngine: Sendable {
    /// How many workouts a day's answer ranks.
    public static let dailyCount = 3

    public init() {}

    /// The workouts the context allows: entitlement and equipment.
    public func eligible(_ catalog: [CatalogWorkout], for context: RecommendationContext) -> [CatalogWorkout] {
        catalog.filter { workout in
            (context.isEntitledToPremium || !workout.isPremium) && (context.equipment.map(workout.canBeDone(with:)) ?? true)
        }
    }

    /// Every eligible workout, best first.
    public func ranked(_ catalog: [CatalogWorkout], for context: RecommendationContext) -> [ScoredWorkout] {
        eligible(catalog, for: context).map { score($0, context) }.sorted(by: Self.better)
    }

    /// The day's three (fewer when fewer are eligible), the phase guidance and a gentler alternative.
    public func recommend(_ catalog: [CatalogWorkout], for context: RecommendationContext) -> DailyRecommendations {
        var pool = ranked(catalog, for: context)
        let gentle = pool.filter { $0.workout.intensity == .low }
        if context.energy == .low, gentle.count >= Self.dailyCount { pool = gentle }
        let unseen = pool.filter { !context.alreadyShown.contains($0.workout.id) }
        var remaining = unseen.count >= Self.dailyCount ? unseen : pool
        var picks: [ScoredWorkout] = []
        while picks.count < Self.dailyCount, !remaining.isEmpty {
            let adjusted = remaining.enumerated().map { index, candidate in
                (index, candidate.score - 15 * picks.count(where: { $0.workout.type == candidate.workout.type }))
            }
            guard let best = adjusted.max(by: { a, b in
                a.1 != b.1 ? a.1 < b.1 : remaining[a.0].workout.id.description > remaining[b.0].workout.id.description
            }) else { break }
            picks.append(remaining.remove(at: best.0))
        }
        return DailyRecommendations(
            recommendations: picks.enumerated().map { Recommendation(workout: $1.workout, reason: $1.reason, priority: $0 + 1) },
            phaseGuidance: Self.phaseGuidance(for: context),
            alternativeIfLowEnergy: lowEnergyAlternative(catalog, for: context, avoiding: Set(picks.map(\.workout.id)))
        )
    }

    /// The best low-intensity workout for the same day on low energy, preferring one not already picked; the
    /// gentlest eligible workout when none is low intensity; `nil` when nothing is eligible.
    public func lowEnergyAlternative(
        _ catalog: [CatalogWorkout], for context: RecommendationContext, avoiding picked: Set<WorkoutID>
    ) -> CatalogWorkout? {
        var tired = context
        tired.energy = .low
        let ranked = ranked(catalog, for: tired).map(\.workout)
        let gentle = ranked.filter { $0.intensity == .low }
        return gentle.first { !picked.contains($0.id) } ?? gentle.first
            ?? ranked.min { $0.intensity != $1.intensity ? $0.intensity < $1.intensity : $0.durationMinutes < $1.durationMinutes }
    }

    /// The seed's guidance for the phase, with a word on a late period or a low-energy day.
    public static func phaseGuidance(for context: RecommendationContext) -> String {
        var text = context.phase?.guidance
            ?? "Move in a way that feels good today. Log a period to get suggestions synced to your cycle."
        if context.isLate { text += " Your period looks late; keep things gentle if you feel off." }
        if context.energy == .low, context.phase != .menstrual { text += " Low on energy? A gentler session still counts." }
        return text
    }

    // MARK: Scoring

    private static func better(_ a: ScoredWorkout, _ b: ScoredWorkout) -> Bool {
        a.score != b.score ? a.score > b.score : a.workout.id.description < b.workout.id.description
    }

    private func score(_ workout: CatalogWorkout, _ context: RecommendationContext) -> ScoredWorkout {
        var points = 0
        // Positive contributions with the clause that explains them, in the order they were found.
        var clauses: [(points: Int, text: String)] = []
        func credit(_ value: Int, _ text: String) {
            points += value
            clauses.append((value, text))
        }

        let type = workout.type
        if let phase = context.phase {
            var phasePoints = 0
            if let rank = phase.recommendedWorkoutTypes.firstIndex(of: type) { phasePoints += 30 - 4 * rank }
            if workout.phases.contains(phase) { phasePoints += 20 }
            if phasePoints > 0 { credit(phasePoints, "\(type.displayName) suits your \(phase.rawValue) phase") }
        }

        let target = context.targetIntensity
        switch workout.intensity.distance(to: target) {
        case 0:
            let why = switch context.energy {
            case .low: "it is gentle enough for a low-energy day"
            case .high: "\(target.rawValue) intensity matches your energy today"
            default: context.phase == nil ? "\(target.rawValue) intensity keeps progress steady" : "\(target.rawValue) intensity fits this point in your cycle"
            }
            credit(25, why)
        case 1: points += 5
        default: points -= 25
        }

        if context.preferredTypes.contains(type) { credit(15, "it is one of your favourite types") }
        let servedGoals = context.goals.filter {
            $0.supportingTypes.contains(type) || ($0 == .consistency && workout.durationMinutes <= 30)
        }
        if let first = servedGoals.first { credit(6 * servedGoals.count, "it supports your goal to \(first.phrase)") }

        let level = context.fitnessLevel ?? .beginner
        if level == .beginner {
            if workout.intensity == .high { points -= 15 }
            if workout.durationMinutes > 45 { points -= 10 }
        }
        if level == .advanced, workout.intensity == .low, context.phase != .menstrual, context.energy != .low { points -= 8 }
        if context.goals.contains(.postpartumRecovery), workout.intensity == .high { points -= 15 }

        if context.energy == .low {
            if workout.durationMinutes > 30 { points -= 8 }
            if workout.durationMinutes <= 20 { credit(4, "it is short") }
        }

        var typePenalty = 0
        for recent in context.recentWorkouts {
            if recent.workout == workout.id, (0...7).contains(recent.daysAgo) { points -= 50 - 6 * recent.daysAgo }
            if recent.type == type, (0...2).contains(recent.daysAgo) { typePenalty += 12 - 4 * recent.daysAgo }
        }
        points -= min(typePenalty, 24)
        let yesterday = context.recentWorkouts.filter { $0.daysAgo == 1 }.map(\.type)
        if let last = yesterday.first, !yesterday.contains(type) {
            credit(4, "it is a change of pace from yesterday's \(last.displayName)")
        }

        if workout.isFeatured { points += 3 }

        return ScoredWorkout(workout: workout, score: points, reason: Self.reason(clauses, workout))
    }

    /// The two strongest clauses as one sentence.
    private static func reason(_ clauses: [(points: Int, text: String)], _ workout: CatalogWorkout) -> String {
        let top = clauses.enumerated()
            .sorted { a, b in a.element.points != b.element.points ? a.element.points > b.element.points : a.offset < b.offset }
            .prefix(2).map(\.element.text)
        guard let first = top.first else {
            return "\(workout.title) is a \(workout.durationMinutes)-minute \(workout.type.displayName.lowercased()) session you can do today."
        }
        let sentence = top.count > 1 ? "\(first), and \(top[1])" : first
        return sentence.prefix(1).uppercased() + sentence.dropFirst() + "."
    }
}

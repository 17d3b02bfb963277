#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One suggested workout and why (the contract's `RecommendedWorkout`).
public struct RecommendedWorkout: Sendable, Equatable, Identifiable, Codable {
    /// 1 is the best fit.
    public var priority: Int
    /// Why it suits today, for the card's subtitle.
    public var reason: String
    /// The workout.
    public var workout: CatalogWorkout

    /// The workout's id.
    public var id: WorkoutID { workout.id }

    /// Makes a recommendation.
    public init(priority: Int, reason: String, workout: CatalogWorkout) {
        self.priority = priority
        self.reason = reason
        self.workout = workout
    }
}

/// Today's suggestions (seed 001's home screen): the record of the contract's `DailyRecommendations`, whose JSON it
/// reads and writes (`date`, `recommendations`, `phaseGuidance`, `alternativeIfLowEnergy` are its names there).
public struct TodayRecommendations: Sendable, Equatable, Codable {
    /// The user's local day they are for.
    public var day: CalendarDay
    /// Today's phase, when the cycle is tracked.
    public var phase: CyclePhase?
    /// Today's cycle day, when the cycle is tracked.
    public var cycleDay: Int?
    /// The energy the user reported, if any.
    public var energy: EnergyLevel?
    /// Up to three workouts, best first.
    public var workouts: [RecommendedWorkout]
    /// The phase's guidance line.
    public var guidance: String
    /// A gentler workout for a low-energy day.
    public var lowEnergyAlternative: CatalogWorkout?
    /// Whether a language model ranked them (`llm`) or the rules did (`rules`).
    public var source: String
    /// When they were made.
    public var generatedAt: Date

    private enum CodingKeys: String, CodingKey {
        case day = "date", phase, cycleDay, energy, workouts = "recommendations", guidance = "phaseGuidance"
        case lowEnergyAlternative = "alternativeIfLowEnergy", source, generatedAt
    }

    /// Makes a value.
    public init(
        day: CalendarDay, phase: CyclePhase?, cycleDay: Int?, energy: EnergyLevel?, workouts: [RecommendedWorkout], guidance: String,
        lowEnergyAlternative: CatalogWorkout?, source: String, generatedAt: Date
    ) {
        self.day = day
        self.phase = phase
        self.cycleDay = cycleDay
        self.energy = energy
        self.workouts = workouts
        self.guidance = guidance
        self.lowEnergyAlternative = lowEnergyAlternative
        self.source = source
        self.generatedAt = generatedAt
    }
}

/// How the user says they feel today.
public enum EnergyLevel: String, Sendable, Codable, CaseIterable {
    case low, medium, high
}

/// Strength Grace & Flow's phase tables (seed 001, "Cycle Data Model"): what each phase calls for.
extension CyclePhase {
    /// The intensity the phase suits.
    public var recommendedIntensity: Intensity {
        switch self {
        case .menstrual: .low
        case .follicular: .medium
        case .ovulatory: .high
        case .luteal: .medium
        }
    }

    /// The workout types the phase suits, best first.
    public var recommendedWorkoutTypes: [WorkoutType] {
        switch self {
        case .menstrual: [.yoga, .gentleStretch, .walkingPilates]
        case .follicular: [.strength, .pilates, .barre, .yoga]
        case .ovulatory: [.hiitStrength, .strength, .powerPilates, .barre]
        case .luteal: [.pilates, .barre, .yoga, .strength]
        }
    }

    /// The seed's one-line guidance for the phase.
    public var guidance: String {
        switch self {
        case .menstrual: "Rest and restore. Honor lower energy with gentle movement."
        case .follicular: "Energy is rising. Great time to try new things and build strength."
        case .ovulatory: "Peak energy. Embrace challenging workouts and social movement."
        case .luteal: "Winding down. Focus on steady, grounding practices."
        }
    }
}

extension FitnessGoal {
    /// The workout types that serve the goal (`consistency` is served by short sessions of any type instead).
    public var supportingTypes: Set<WorkoutType> {
        switch self {
        case .buildStrength: [.strength, .hiitStrength, .powerPilates, .barre]
        case .improveFlexibility: [.yoga, .gentleStretch, .pilates]
        case .reduceStress: [.yoga, .meditation, .gentleStretch, .walkingPilates]
        case .postpartumRecovery: [.walkingPilates, .gentleStretch, .pilates]
        case .hormoneBalance: [.yoga, .pilates, .walkingPilates, .strength]
        case .consistency: []
        }
    }

    /// The goal as it reads in a sentence ("supports your goal to …").
    public var phrase: String {
        switch self {
        case .buildStrength: "build strength"
        case .improveFlexibility: "improve flexibility"
        case .reduceStress: "reduce stress"
        case .postpartumRecovery: "recover after pregnancy"
        case .hormoneBalance: "support hormone balance"
        case .consistency: "stay consistent"
        }
    }
}

extension FitnessLevel {
    /// Training days in a week of recommendations; the rest are rest days.
    public var trainingDaysPerWeek: Int {
        switch self {
        case .beginner: 3
        case .intermediate: 4
        case .advanced: 5
        }
    }

    /// The longest run of consecutive training days a week of recommendations schedules.
    public var longestTrainingRun: Int {
        switch self {
        case .beginner: 1
        case .intermediate: 2
        case .advanced: 3
        }
    }
}

extension Intensity {
    /// One step harder (`high` stays `high`).
    var stepUp: Intensity { self == .low ? .medium : .high }

    /// How many steps apart two intensities are (0–2).
    func distance(to other: Intensity) -> Int {
        let all = Intensity.allCases
        return abs((all.firstIndex(of: self) ?? 0) - (all.firstIndex(of: other) ?? 0))
    }
}

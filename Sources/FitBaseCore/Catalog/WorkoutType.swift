/// The kinds of workout in the catalog (Strength Grace & Flow's taxonomy).
public enum WorkoutType: String, Sendable, Codable, CaseIterable {
    case strength
    case hiitStrength
    case pilates
    case powerPilates
    case walkingPilates
    case barre
    case yoga
    case gentleStretch
    case meditation

    /// The name shown to users.
    public var displayName: String {
        switch self {
        case .strength: "Strength"
        case .hiitStrength: "HIIT Strength"
        case .pilates: "Pilates"
        case .powerPilates: "Power Pilates"
        case .walkingPilates: "Walking Pilates"
        case .barre: "Barre"
        case .yoga: "Yoga"
        case .gentleStretch: "Gentle Stretch"
        case .meditation: "Meditation"
        }
    }
}

/// The four phases of the menstrual cycle that training is synced to.
public enum CyclePhase: String, Sendable, Codable, CaseIterable {
    case menstrual, follicular, ovulatory, luteal

    /// The name shown to users.
    public var displayName: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}

/// How hard a workout is.
public enum Intensity: String, Sendable, Codable, CaseIterable, Comparable {
    case low, medium, high

    public static func < (lhs: Intensity, rhs: Intensity) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .low: 0
        case .medium: 1
        case .high: 2
        }
    }
}

/// What a workout needs; `none` means nothing at all.
public enum Equipment: String, Sendable, Codable, CaseIterable {
    case none, dumbbells, resistanceBands, yogaMat, pilatesRing, kettlebell, barreOrChair
}

/// The body areas a workout works.
public enum TargetArea: String, Sendable, Codable, CaseIterable {
    case fullBody, upperBody, lowerBody, core, glutes, arms, back
}

/// The tag of ``WorkoutID``.
public enum Workout {}
/// The tag of ``ProgramID``.
public enum Program {}
/// Identifies a catalog workout.
public typealias WorkoutID = Identifier<Workout>
/// Identifies a catalog program.
public typealias ProgramID = Identifier<Program>

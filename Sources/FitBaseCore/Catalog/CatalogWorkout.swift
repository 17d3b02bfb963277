/// A workout of the catalog (Strength Grace & Flow's workout model).
public struct CatalogWorkout: Sendable, Equatable, Identifiable {
    public var id: WorkoutID
    public var title: String
    public var description: String
    public var type: WorkoutType
    public var durationMinutes: Int
    public var intensity: Intensity
    /// The phases the workout suits.
    public var phases: [CyclePhase]
    /// Everything it needs; `[.none]` when nothing.
    public var equipment: [Equipment]
    public var thumbnailURL: String
    /// Withheld from callers not entitled to premium content when ``isPremium``.
    public var videoURL: String
    public var instructorName: String
    public var tags: [String]
    public var isFeatured: Bool
    public var isPremium: Bool
    public var targetAreas: [TargetArea]
    public var benefits: [String]

    public init(
        id: WorkoutID, title: String, description: String, type: WorkoutType, durationMinutes: Int, intensity: Intensity,
        phases: [CyclePhase], equipment: [Equipment], thumbnailURL: String, videoURL: String, instructorName: String,
        tags: [String], isFeatured: Bool, isPremium: Bool, targetAreas: [TargetArea], benefits: [String]
    ) {
        self.id = id
        self.title = title
        self.description = description
        self.type = type
        self.durationMinutes = durationMinutes
        self.intensity = intensity
        self.phases = phases
        self.equipment = equipment
        self.thumbnailURL = thumbnailURL
        self.videoURL = videoURL
        self.instructorName = instructorName
        self.tags = tags
        self.isFeatured = isFeatured
        self.isPremium = isPremium
        self.targetAreas = targetAreas
        self.benefits = benefits
    }

    /// Whether someone who owns `available` can do this workout (`none` is always available).
    public func canBeDone(with available: Set<Equipment>) -> Bool {
        equipment.allSatisfy { $0 == .none || available.contains($0) }
    }
}

/// How experienced a program expects its user to be.
public typealias ProgramLevel = FitnessLevel

/// An ordered multi-week sequence of workouts.
public struct CatalogProgram: Sendable, Equatable, Identifiable {
    public var id: ProgramID
    public var title: String
    public var description: String
    public var level: ProgramLevel
    public var isPremium: Bool
    /// Week by week, the workouts in the order they are done.
    public var weeks: [[WorkoutID]]

    public init(id: ProgramID, title: String, description: String, level: ProgramLevel, isPremium: Bool, weeks: [[WorkoutID]]) {
        self.id = id
        self.title = title
        self.description = description
        self.level = level
        self.isPremium = isPremium
        self.weeks = weeks
    }
}

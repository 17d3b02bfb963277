/// How experienced the user says they are.
public enum FitnessLevel: String, Sendable, Codable, CaseIterable {
    case beginner, intermediate, advanced
}

/// What the user wants from training.
public enum FitnessGoal: String, Sendable, Codable, CaseIterable {
    case buildStrength, improveFlexibility, reduceStress, postpartumRecovery, hormoneBalance, consistency
}

/// The onboarding answers and preferences of an account (Strength Grace & Flow's user model).
public struct Profile: Sendable, Equatable {
    public static let cycleLengthRange = 21...45
    public static let periodLengthRange = 2...10

    public var displayName: String?
    /// An https URL of the user's picture (shown on group leaderboards).
    public var photoURL: String?
    public var fitnessLevel: FitnessLevel?
    public var goals: [FitnessGoal]
    public var preferredWorkoutTypes: [WorkoutType]
    /// Days; 21–45, default 28.
    public var averageCycleLength: Int
    /// Days; 2–10, default 5.
    public var averagePeriodLength: Int
    /// `YYYY-MM-DD`.
    public var lastPeriodStartDate: String?
    public var cycleTrackingEnabled: Bool
    /// `nil` until the user has answered.
    public var notificationsEnabled: Bool?
    /// `HH:mm`, local time.
    public var preferredWorkoutTime: String?
    /// IANA identifier, e.g. `Europe/Lisbon`; `nil` means UTC.
    public var timeZone: String?
    /// Whether workouts count on group leaderboards (default true).
    public var shareWorkoutData: Bool
    /// The equipment the user has; `nil` until answered (recommendations then rule nothing out for equipment).
    public var availableEquipment: [Equipment]?
    /// Which pushes the user wants and their quiet hours (all pushes stay off while ``notificationsEnabled`` is not `true`).
    public var notificationPreferences = NotificationPreferences()

    /// A new account's profile: nothing answered yet, the documented defaults elsewhere.
    public init(
        displayName: String? = nil, fitnessLevel: FitnessLevel? = nil, goals: [FitnessGoal] = [],
        preferredWorkoutTypes: [WorkoutType] = [], averageCycleLength: Int = 28, averagePeriodLength: Int = 5,
        lastPeriodStartDate: String? = nil, cycleTrackingEnabled: Bool = false, notificationsEnabled: Bool? = nil,
        preferredWorkoutTime: String? = nil, timeZone: String? = nil, shareWorkoutData: Bool = true,
        availableEquipment: [Equipment]? = nil, photoURL: String? = nil
    ) {
        self.displayName = displayName
        self.photoURL = photoURL
        self.fitnessLevel = fitnessLevel
        self.goals = goals
        self.preferredWorkoutTypes = preferredWorkoutTypes
        self.averageCycleLength = averageCycleLength
        self.averagePeriodLength = averagePeriodLength
        self.lastPeriodStartDate = lastPeriodStartDate
        self.cycleTrackingEnabled = cycleTrackingEnabled
        self.notificationsEnabled = notificationsEnabled
        self.preferredWorkoutTime = preferredWorkoutTime
        self.timeZone = timeZone
        self.shareWorkoutData = shareWorkoutData
        self.availableEquipment = availableEquipment
    }

    /// Whether every onboarding step has an answer: name, level, at least one goal and workout type, the cycle step
    /// (tracking off, or a last period date), and the notification question.
    public var onboardingCompleted: Bool {
        displayName?.isEmpty == false && fitnessLevel != nil && !goals.isEmpty && !preferredWorkoutTypes.isEmpty
            && (!cycleTrackingEnabled || lastPeriodStartDate != nil) && notificationsEnabled != nil
    }
}

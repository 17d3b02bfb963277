/// Which pushes a user wants, beside the profile's `notificationsEnabled` (off turns every one of them off).
public struct NotificationPreferences: Sendable, Equatable, Codable {
    /// Someone joined the user's group (`new_member`).
    public var newMember: Bool
    /// Someone overtook the user on a leaderboard (`rank_change`).
    public var rankChange: Bool
    /// A challenge week closed, with the user's standing (`week_ended`).
    public var weekEnded: Bool
    /// A reminder at the profile's `preferredWorkoutTime` on training days.
    public var workoutReminder: Bool
    /// A reminder the day before the cycle predictor expects the next period (off unless asked for).
    public var periodReminder: Bool
    /// Whether reminders may say what they are about on the lock screen; otherwise they read "You have a new reminder".
    public var showSensitiveContent: Bool
    /// Local `HH:mm` when quiet hours begin; with ``quietHoursEnd``, both or neither.
    public var quietHoursStart: String?
    /// Local `HH:mm` when quiet hours end (before the start: the hours run over midnight).
    public var quietHoursEnd: String?

    /// The defaults: every social push and the workout reminder on, the period reminder and sensitive text off,
    /// no quiet hours.
    public init(
        newMember: Bool = true, rankChange: Bool = true, weekEnded: Bool = true, workoutReminder: Bool = true,
        periodReminder: Bool = false, showSensitiveContent: Bool = false, quietHoursStart: String? = nil, quietHoursEnd: String? = nil
    ) {
        self.newMember = newMember
        self.rankChange = rankChange
        self.weekEnded = weekEnded
        self.workoutReminder = workoutReminder
        self.periodReminder = periodReminder
        self.showSensitiveContent = showSensitiveContent
        self.quietHoursStart = quietHoursStart
        self.quietHoursEnd = quietHoursEnd
    }

    /// Whether the local minute of the day `minute` (0–1439) falls in quiet hours (start included, end excluded).
    public func isQuiet(atMinute minute: Int) -> Bool {
        guard let start = quietHoursStart.flatMap(Self.minuteOfDay), let end = quietHoursEnd.flatMap(Self.minuteOfDay), start != end else {
            return false
        }
        return start < end ? (start..<end).contains(minute) : minute >= start || minute < end
    }

    /// `HH:mm` (00:00–23:59) as minutes since midnight; `nil` when it is not such a time.
    public static func minuteOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard text.count == 5, parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }
}

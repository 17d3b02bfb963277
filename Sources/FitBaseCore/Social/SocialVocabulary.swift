/// A member's role in a group.
public enum GroupRole: String, Sendable, Hashable, Codable, CaseIterable {
    case admin, member
}

/// What a notification of the feed is about.
public enum NotificationKind: String, Sendable, Hashable, Codable, CaseIterable {
    case newMember = "new_member"
    case rankChange = "rank_change"
    case weekEnded = "week_ended"
}

/// What a group's weekly challenge counts.
public enum ChallengeKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Workouts this week.
    case checkIns
    /// Consecutive local days with a workout this week.
    case streak
}

import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// The contract's types turned into the app layer's values. Its enums are Core's own (the generator's type overrides):
/// a value Core does not know fails to decode, visibly, instead of being skipped or guessed.
extension CatalogWorkout {
    init?(wire workout: Components.Schemas.Workout) {
        guard let id = WorkoutID(workout.id) else { return nil }
        self.init(
            id: id, title: workout.title, description: workout.description, type: workout._type, durationMinutes: workout.durationMinutes,
            intensity: workout.intensity, phases: workout.phases, equipment: workout.equipment, thumbnailURL: workout.thumbnailURL,
            videoURL: workout.videoURL ?? "", instructorName: workout.instructorName, tags: workout.tags, isFeatured: workout.isFeatured,
            isPremium: workout.isPremium, targetAreas: workout.targetAreas, benefits: workout.benefits
        )
    }
}

extension Profile {
    init(wire user: Components.Schemas.User) {
        self.init(
            displayName: user.displayName, fitnessLevel: user.fitnessLevel, goals: user.goals, preferredWorkoutTypes: user.preferredWorkoutTypes,
            averageCycleLength: user.averageCycleLength, averagePeriodLength: user.averagePeriodLength, lastPeriodStartDate: user.lastPeriodStartDate,
            cycleTrackingEnabled: user.cycleTrackingEnabled, notificationsEnabled: user.notificationsEnabled, preferredWorkoutTime: user.preferredWorkoutTime,
            timeZone: user.timeZone, shareWorkoutData: user.privacy.shareWorkoutData ?? true,
            availableEquipment: user.availableEquipment, photoURL: user.photoURL
        )
    }

    /// The profile as the body of `PATCH /v1/me`.
    var wireUpdate: Components.Schemas.UserUpdate {
        Components.Schemas.UserUpdate(
            displayName: displayName, photoURL: photoURL, fitnessLevel: fitnessLevel, goals: goals, preferredWorkoutTypes: preferredWorkoutTypes,
            averageCycleLength: averageCycleLength, averagePeriodLength: averagePeriodLength, lastPeriodStartDate: lastPeriodStartDate,
            cycleTrackingEnabled: cycleTrackingEnabled, notificationsEnabled: notificationsEnabled, preferredWorkoutTime: preferredWorkoutTime,
            timeZone: timeZone, availableEquipment: availableEquipment,
            privacy: .init(shareWorkoutData: shareWorkoutData)
        )
    }
}

extension UserProfile {
    init(wire user: Components.Schemas.User) {
        self.init(id: user.id, email: user.email, emailVerified: user.emailVerified, profile: Profile(wire: user))
    }
}

extension SocialGroup {
    init(wire group: Components.Schemas.Group) {
        self.init(
            id: group.id, name: group.name, timeZone: group.timeZone, memberCount: group.memberCount, role: group.role == .admin ? .admin : .member,
            createdAt: group.createdAt
        )
    }
}

extension GroupLeaderboard {
    init(wire board: Components.Schemas.Leaderboard) {
        func row(_ entry: Components.Schemas.LeaderboardEntry) -> LeaderboardRow {
            LeaderboardRow(userID: entry.userId, displayName: entry.displayName, photoURL: entry.photoURL, value: entry.value, rank: entry.rank)
        }
        self.init(
            type: board.challenge._type == .streak ? .streak : .checkIns, weekStart: CalendarDay(board.challenge.weekStart) ?? CalendarDay(daysSince1970: 0),
            endsAt: board.challenge.endsAt, rows: board.entries.map(row), currentUser: board.currentUserEntry.map(row)
        )
    }
}

extension FeedNotification {
    init(wire notification: Components.Schemas.Notification) {
        self.init(
            id: notification.id, kind: notification._type, groupID: notification.groupId, message: notification.message, isRead: notification.isRead,
            createdAt: notification.createdAt
        )
    }
}

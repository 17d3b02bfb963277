import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// The contract's types turned into the app layer's values (unknown enum values — a newer server's — are skipped or
/// given a neutral default, never a failure).
extension CatalogWorkout {
    init?(wire workout: Components.Schemas.Workout) {
        guard let id = WorkoutID(workout.id), let type = WorkoutType(rawValue: workout._type.rawValue),
            let intensity = Intensity(rawValue: workout.intensity.rawValue)
        else { return nil }
        self.init(
            id: id, title: workout.title, description: workout.description, type: type, durationMinutes: workout.durationMinutes,
            intensity: intensity, phases: workout.phases.compactMap { CyclePhase(rawValue: $0.rawValue) },
            equipment: workout.equipment.compactMap { Equipment(rawValue: $0.rawValue) }, thumbnailURL: workout.thumbnailURL,
            videoURL: workout.videoURL ?? "", instructorName: workout.instructorName, tags: workout.tags, isFeatured: workout.isFeatured,
            isPremium: workout.isPremium, targetAreas: workout.targetAreas.compactMap { TargetArea(rawValue: $0.rawValue) }, benefits: workout.benefits
        )
    }
}

extension Profile {
    init(wire user: Components.Schemas.User) {
        self.init(
            displayName: user.displayName, fitnessLevel: user.fitnessLevel.flatMap { FitnessLevel(rawValue: $0.rawValue) },
            goals: user.goals.compactMap { FitnessGoal(rawValue: $0.rawValue) },
            preferredWorkoutTypes: user.preferredWorkoutTypes.compactMap { WorkoutType(rawValue: $0.rawValue) },
            averageCycleLength: user.averageCycleLength, averagePeriodLength: user.averagePeriodLength, lastPeriodStartDate: user.lastPeriodStartDate,
            cycleTrackingEnabled: user.cycleTrackingEnabled, notificationsEnabled: user.notificationsEnabled, preferredWorkoutTime: user.preferredWorkoutTime,
            timeZone: user.timeZone, shareWorkoutData: user.privacy.shareWorkoutData ?? true,
            availableEquipment: user.availableEquipment.map { $0.compactMap { Equipment(rawValue: $0.rawValue) } }, photoURL: user.photoURL
        )
    }

    /// The profile as the body of `PATCH /v1/me`.
    var wireUpdate: Components.Schemas.UserUpdate {
        Components.Schemas.UserUpdate(
            displayName: displayName, photoURL: photoURL, fitnessLevel: fitnessLevel.flatMap { .init(rawValue: $0.rawValue) },
            goals: goals.compactMap { .init(rawValue: $0.rawValue) }, preferredWorkoutTypes: preferredWorkoutTypes.compactMap { .init(rawValue: $0.rawValue) },
            averageCycleLength: averageCycleLength, averagePeriodLength: averagePeriodLength, lastPeriodStartDate: lastPeriodStartDate,
            cycleTrackingEnabled: cycleTrackingEnabled, notificationsEnabled: notificationsEnabled, preferredWorkoutTime: preferredWorkoutTime,
            timeZone: timeZone, availableEquipment: availableEquipment.map { $0.compactMap { .init(rawValue: $0.rawValue) } },
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
    init?(wire notification: Components.Schemas.Notification) {
        guard let kind = NotificationKind(rawValue: notification._type.rawValue) else { return nil }
        self.init(
            id: notification.id, kind: kind, groupID: notification.groupId, message: notification.message, isRead: notification.isRead,
            createdAt: notification.createdAt
        )
    }
}

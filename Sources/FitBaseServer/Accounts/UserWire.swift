import FitBaseAPI
import FitBaseCore

/// Maps account records to the contract's `User`, the one place that shape is built.
enum UserWire {
    static func user(_ user: UserRecord, profile: Profile, identities: [IdentityRecord], currentGroup: GroupID?) -> Components.Schemas.User {
        var methods: [Components.Schemas.User.SignInMethodsPayloadPayload] = user.passwordHash == nil ? [] : [.password]
        methods += identities.map { $0.provider == .apple ? .apple : .google }
        return .init(
            id: user.id.description,
            email: user.email,
            emailIsPrivateRelay: identities.contains { $0.isPrivateEmail } ? true : nil,
            emailVerified: user.emailVerifiedAt != nil,
            lastSignInAt: user.lastSignInAt,
            displayName: profile.displayName,
            photoURL: profile.photoURL,
            role: user.role == .admin ? .admin : .user,
            signInMethods: methods,
            createdAt: user.createdAt,
            fitnessLevel: profile.fitnessLevel,
            goals: profile.goals,
            preferredWorkoutTypes: profile.preferredWorkoutTypes,
            averageCycleLength: profile.averageCycleLength,
            averagePeriodLength: profile.averagePeriodLength,
            lastPeriodStartDate: profile.lastPeriodStartDate,
            cycleTrackingEnabled: profile.cycleTrackingEnabled,
            notificationsEnabled: profile.notificationsEnabled,
            preferredWorkoutTime: profile.preferredWorkoutTime,
            timeZone: profile.timeZone,
            availableEquipment: profile.availableEquipment,
            privacy: .init(shareWorkoutData: profile.shareWorkoutData),
            notificationPreferences: notificationPreferences(profile.notificationPreferences),
            currentGroupId: currentGroup?.description,
            onboardingCompleted: profile.onboardingCompleted
        )
    }

    /// The profile as the `preferences` record of the change feed: the fields `PATCH /v1/me` takes.
    static func preferences(_ profile: Profile) -> Components.Schemas.UserUpdate {
        .init(
            displayName: profile.displayName,
            photoURL: profile.photoURL,
            fitnessLevel: profile.fitnessLevel,
            goals: profile.goals,
            preferredWorkoutTypes: profile.preferredWorkoutTypes,
            averageCycleLength: profile.averageCycleLength,
            averagePeriodLength: profile.averagePeriodLength,
            lastPeriodStartDate: profile.lastPeriodStartDate,
            cycleTrackingEnabled: profile.cycleTrackingEnabled,
            notificationsEnabled: profile.notificationsEnabled,
            preferredWorkoutTime: profile.preferredWorkoutTime,
            timeZone: profile.timeZone,
            notificationPreferences: notificationPreferences(profile.notificationPreferences),
            availableEquipment: profile.availableEquipment,
            privacy: .init(shareWorkoutData: profile.shareWorkoutData)
        )
    }

    /// Every switch, and the quiet hours when set.
    static func notificationPreferences(_ preferences: NotificationPreferences) -> Components.Schemas.NotificationPreferences {
        .init(
            newMember: preferences.newMember, rankChange: preferences.rankChange, weekEnded: preferences.weekEnded,
            workoutReminder: preferences.workoutReminder, periodReminder: preferences.periodReminder,
            showSensitiveContent: preferences.showSensitiveContent, quietHoursStart: preferences.quietHoursStart,
            quietHoursEnd: preferences.quietHoursEnd
        )
    }
}

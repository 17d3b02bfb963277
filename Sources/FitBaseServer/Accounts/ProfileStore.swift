import FitBaseCore
import Foundation
import SQLKit

/// SQL for `user_profiles` (and the display name, which lives on `users`).
struct ProfileStore: Sendable {
    let database: Database

    /// The profile of `user`, with defaults for what was never set.
    func profile(of user: UserID) async throws -> Profile {
        try await database.withConnection { db in try await Self.profile(of: user, on: db) }
    }

    /// Reads, changes and writes the profile in one transaction; `change` may throw to abort with a problem.
    func update(_ user: UserID, now: Date, _ change: @escaping @Sendable (inout Profile) throws -> Void) async throws -> Profile {
        try await database.transaction { db in try await Self.update(user, updatedAt: now, on: db, change) }
    }

    /// Reads, changes and writes the profile on `db` (inside the caller's transaction), entering the change into the
    /// sync feed stamped `updatedAt`.
    static func update(_ user: UserID, updatedAt now: Date, on db: any SQLDatabase, _ change: (inout Profile) throws -> Void) async throws -> Profile {
        var profile = try await profile(of: user, on: db)
        try change(&profile)
        try await db.update("users").set("display_name", to: profile.displayName).set("photo_url", to: profile.photoURL).set("updated_at", to: now)
            .where("id", .equal, user.rawValue).run()
        let values: [any Encodable & Sendable] = [
            profile.fitnessLevel?.rawValue, try jsonText(profile.goals.map(\.rawValue)),
            try jsonText(profile.preferredWorkoutTypes.map(\.rawValue)), profile.averageCycleLength,
            profile.averagePeriodLength, profile.lastPeriodStartDate, profile.cycleTrackingEnabled,
            profile.notificationsEnabled, profile.preferredWorkoutTime, profile.timeZone, profile.shareWorkoutData,
            try profile.availableEquipment.map { try jsonText($0.map(\.rawValue)) },
            profile.notificationPreferences == NotificationPreferences() ? nil : try jsonText(profile.notificationPreferences), now,
        ]
        try await db.insert(into: "user_profiles")
            .columns(["user_id"] + Self.columns + ["updated_at"])
            .values([SQLBind(user.rawValue)] + values.map { SQLBind($0) })
            .onConflict(with: ["user_id"]) { conflict in
                (Self.columns + ["updated_at"]).reduce(conflict) { $0.set(excludedValueOf: $1) }
            }
            .run()
        try await SyncFeed.record(.preferences, id: SyncFeed.preferencesID, of: user, deleted: false, updatedAt: now, on: db)
        return profile
    }

    private static let columns = [
        "fitness_level", "goals", "preferred_workout_types", "average_cycle_length", "average_period_length",
        "last_period_start_date", "cycle_tracking_enabled", "notifications_enabled", "preferred_workout_time",
        "time_zone", "share_workout_data", "available_equipment", "notification_preferences",
    ]

    /// The account's names and its profile row (absent until the profile is first written), in one statement.
    private static let selectProfile = StoredStatement(
        #"SELECT "users"."display_name" AS "display_name", "users"."photo_url" AS "photo_url", "user_profiles"."user_id" AS "profile_user_id", "#
            + columns.map { #""user_profiles"."\#($0)" AS "\#($0)""# }.joined(separator: ", ")
            + #" FROM "users" LEFT JOIN "user_profiles" ON "user_profiles"."user_id" = "users"."id" WHERE "users"."id" = ?"#
    )

    static func profile(of user: UserID, on db: any SQLDatabase) async throws -> Profile {
        let row = try await selectProfile(user.rawValue).first(on: db)
        let displayName = try row?.decode(column: "display_name", as: String?.self)
        let photoURL = try row?.decode(column: "photo_url", as: String?.self)
        guard let row, try row.decode(column: "profile_user_id", as: UUID?.self) != nil else {
            return Profile(displayName: displayName, photoURL: photoURL)
        }
        var profile = Profile(
            displayName: displayName,
            fitnessLevel: try row.decode(column: "fitness_level", as: String?.self).flatMap(FitnessLevel.init(rawValue:)),
            goals: try row.decodeJSON(column: "goals", as: [String].self).compactMap(FitnessGoal.init(rawValue:)),
            preferredWorkoutTypes: try row.decodeJSON(column: "preferred_workout_types", as: [String].self).compactMap(WorkoutType.init(rawValue:)),
            averageCycleLength: try row.decode(column: "average_cycle_length", as: Int.self),
            averagePeriodLength: try row.decode(column: "average_period_length", as: Int.self),
            lastPeriodStartDate: try row.decode(column: "last_period_start_date", as: String?.self),
            cycleTrackingEnabled: try row.decode(column: "cycle_tracking_enabled", as: Bool.self),
            notificationsEnabled: try row.decode(column: "notifications_enabled", as: Bool?.self),
            preferredWorkoutTime: try row.decode(column: "preferred_workout_time", as: String?.self),
            timeZone: try row.decode(column: "time_zone", as: String?.self),
            shareWorkoutData: try row.decode(column: "share_workout_data", as: Bool.self),
            availableEquipment: try row.decode(column: "available_equipment", as: String?.self).map { _ in
                try row.decodeJSON(column: "available_equipment", as: [String].self).compactMap(Equipment.init(rawValue:))
            },
            photoURL: photoURL
        )
        if try row.decode(column: "notification_preferences", as: String?.self) != nil {
            profile.notificationPreferences = try row.decodeJSON(column: "notification_preferences", as: NotificationPreferences.self)
        }
        return profile
    }
}

extension ProfileStore {
    /// The pushing user's profile, read once per push.
    func profile(_ reads: PushReads) async throws -> Profile {
        let user = reads.user
        return try await reads.once("profile") { try await self.profile(of: user) }
    }
}

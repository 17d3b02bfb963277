import FitBaseAPI
import FitBaseCore
import Foundation
import SQLKit

/// What of a profile is sealed under the user's data key (``SealedFields``), like the rest of their cycle data: the
/// first day of their last period, which says where they stand in their cycle.
struct SealedProfileFields: Sendable, Codable, Equatable {
    var lastPeriodStartDate: String?
}

/// SQL for `user_profiles` (and the display name, which lives on `users`). The profile's cycle dates are stored sealed
/// (`cycle_key_id`, `cycle_sealed`, bound to the user's row) and opened on every read that returns them.
struct ProfileStore: Sendable {
    let database: Database
    let vault: HealthVault

    static let table = "user_profiles"

    /// The profile of `user`, with defaults for what was never set.
    func profile(of user: UserID) async throws -> Profile {
        let vault = self.vault
        return try await database.withConnection { db in try await Self.profile(of: user, on: db, vault: vault) }
    }

    /// Applies a `PATCH /v1/me` body (``ProfileUpdate``) to the profile in one transaction; refuses with a problem
    /// naming every invalid field, writing nothing.
    func apply(_ update: Components.Schemas.UserUpdate, of user: UserID, now: Date) async throws -> Profile {
        try await prepareKey(for: update, of: user)
        let vault = self.vault
        return try await database.transaction { db in try await Self.apply(update, of: user, updatedAt: now, on: db, vault: vault) }
    }

    /// Makes the user's data key before a write that seals a cycle date, outside the write's transaction (the key store
    /// may share this database's single writer).
    func prepareKey(for update: Components.Schemas.UserUpdate, of user: UserID) async throws {
        guard update.lastPeriodStartDate != nil else { return }
        guard try await vault.dataKey(of: user, creating: true) != nil else { throw SealedFieldsError.noKey }
    }

    /// ``apply(_:of:now:)`` on `db`, inside the caller's transaction (the key made first by ``prepareKey(for:of:)``).
    static func apply(
        _ update: Components.Schemas.UserUpdate, of user: UserID, updatedAt now: Date, on db: any SQLDatabase, vault: HealthVault
    ) async throws -> Profile {
        try await Self.update(user, updatedAt: now, on: db, vault: vault) { profile in
            try ProfileUpdate.apply(update, to: &profile, today: LocalCalendar.day(of: now, in: profile.timeZone).description)
        }
    }

    /// Reads, changes and writes the profile on `db` (inside the caller's transaction), entering the change into the
    /// sync feed stamped `updatedAt`. A cycle date is sealed under the user's data key, which must exist already.
    private static func update(
        _ user: UserID, updatedAt now: Date, on db: any SQLDatabase, vault: HealthVault, _ change: (inout Profile) throws -> Void
    ) async throws -> Profile {
        var profile = try await profile(of: user, on: db, vault: vault)
        try change(&profile)
        try await db.update("users").set("display_name", to: profile.displayName).set("photo_url", to: profile.photoURL).set("updated_at", to: now)
            .where("id", .equal, user.rawValue).run()
        let cycleDates = SealedProfileFields(lastPeriodStartDate: profile.lastPeriodStartDate)
        var sealed: SealedFields?
        if cycleDates != SealedProfileFields() {
            guard let key = try await vault.dataKey(of: user, creating: false) else { throw SealedFieldsError.noKey }
            sealed = try vault.seal(cycleDates, table: table, id: user.rawValue, of: user, with: key)
        }
        let values: [any Encodable & Sendable] = [
            profile.fitnessLevel?.rawValue, try jsonText(profile.goals.map(\.rawValue)),
            try jsonText(profile.preferredWorkoutTypes.map(\.rawValue)), profile.averageCycleLength,
            profile.averagePeriodLength, sealed?.keyID, sealed?.sealed, profile.cycleTrackingEnabled,
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
        try await SyncFeed.record(.preferences, id: SyncFeed.preferencesID, of: user, deleted: false, updatedAt: now, changedAt: now, on: db)
        return profile
    }

    private static let columns = [
        "fitness_level", "goals", "preferred_workout_types", "average_cycle_length", "average_period_length",
        "cycle_key_id", "cycle_sealed", "cycle_tracking_enabled", "notifications_enabled", "preferred_workout_time",
        "time_zone", "share_workout_data", "available_equipment", "notification_preferences",
    ]

    /// The account's names and its profile row (absent until the profile is first written), in one statement.
    private static let selectProfile = StoredStatement(
        #"SELECT "users"."display_name" AS "display_name", "users"."photo_url" AS "photo_url", "user_profiles"."user_id" AS "profile_user_id", "#
            + columns.map { #""user_profiles"."\#($0)" AS "\#($0)""# }.joined(separator: ", ")
            + #" FROM "users" LEFT JOIN "user_profiles" ON "user_profiles"."user_id" = "users"."id" WHERE "users"."id" = ?"#
    )

    /// The profile of `user` on `db`, its cycle dates opened. A date sealed under a key that is no longer the user's
    /// (crypto-shredded) reads as never set.
    static func profile(of user: UserID, on db: any SQLDatabase, vault: HealthVault) async throws -> Profile {
        let stored = try await read(user, on: db)
        var profile = stored.profile
        guard let row = stored.row, let keyID = try row.decode(column: "cycle_key_id", as: String?.self),
            let sealed = try row.decode(column: "cycle_sealed", as: Data?.self),
            let key = try await vault.dataKey(of: user, creating: false), key.id == keyID
        else { return profile }
        let fields = try vault.open(SealedProfileFields.self, SealedFields(keyID: keyID, sealed: sealed), table: table, id: user.rawValue, of: user, with: key)
        profile.lastPeriodStartDate = fields.lastPeriodStartDate
        return profile
    }

    /// The profile of `user` on `db` without its sealed cycle dates (``Profile/lastPeriodStartDate`` is `nil`), for
    /// paths that need only settings — names, time zone, notification and sharing switches — and no data key.
    static func settings(of user: UserID, on db: any SQLDatabase) async throws -> Profile {
        try await read(user, on: db).profile
    }

    /// The profile row (`nil` until the profile is first written) and the profile in it, cycle dates still sealed.
    private static func read(_ user: UserID, on db: any SQLDatabase) async throws -> (row: (any SQLRow)?, profile: Profile) {
        let row = try await selectProfile(user.rawValue).first(on: db)
        let displayName = try row?.decode(column: "display_name", as: String?.self)
        let photoURL = try row?.decode(column: "photo_url", as: String?.self)
        guard let row, try row.decode(column: "profile_user_id", as: UUID?.self) != nil else {
            return (nil, Profile(displayName: displayName, photoURL: photoURL))
        }
        var profile = Profile(
            displayName: displayName,
            fitnessLevel: try row.decode(column: "fitness_level", as: String?.self).flatMap(FitnessLevel.init(rawValue:)),
            goals: try row.decodeJSON(column: "goals", as: [String].self).compactMap(FitnessGoal.init(rawValue:)),
            preferredWorkoutTypes: try row.decodeJSON(column: "preferred_workout_types", as: [String].self).compactMap(WorkoutType.init(rawValue:)),
            averageCycleLength: try row.decode(column: "average_cycle_length", as: Int.self),
            averagePeriodLength: try row.decode(column: "average_period_length", as: Int.self),
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
        return (row, profile)
    }
}

extension ProfileStore {
    /// The pushing user's profile, read once per push.
    func profile(_ reads: PushReads) async throws -> Profile {
        let user = reads.user
        return try await reads.once("profile") { try await self.profile(of: user) }
    }
}

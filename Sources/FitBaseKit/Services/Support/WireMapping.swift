import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// The contract's types turned into the app layer's values. Its enums are Core's own (the generator's type overrides):
/// a value Core does not know fails to decode, visibly, instead of being skipped or guessed.
extension CatalogWorkout {
    /// The contract's `Workout` as Core's record, through Core's own reading of that JSON (``ContractJSON``, checked
    /// by `CoreRecordContractTests`); `nil` when it is not one.
    init?(wire workout: Components.Schemas.Workout) {
        guard let record = try? ContractJSON.record(CatalogWorkout.self, from: workout) else { return nil }
        self = record
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
        notificationPreferences = NotificationPreferences(wire: user.notificationPreferences)
    }

    /// The profile as the body of the generated `updateMe` operation.
    var wireUpdate: Components.Schemas.UserUpdate {
        Components.Schemas.UserUpdate(
            displayName: displayName, photoURL: photoURL, fitnessLevel: fitnessLevel, goals: goals, preferredWorkoutTypes: preferredWorkoutTypes,
            averageCycleLength: averageCycleLength, averagePeriodLength: averagePeriodLength, lastPeriodStartDate: lastPeriodStartDate,
            cycleTrackingEnabled: cycleTrackingEnabled, notificationsEnabled: notificationsEnabled, preferredWorkoutTime: preferredWorkoutTime,
            timeZone: timeZone, notificationPreferences: notificationPreferences.wire, availableEquipment: availableEquipment,
            privacy: .init(shareWorkoutData: shareWorkoutData)
        )
    }
}

extension UserProfile {
    /// The profile a `User` answer holds; an answer whose id is not a user id is not understood.
    init(wire user: Components.Schemas.User) throws(FitBaseError) {
        guard let id = UserID(user.id) else { throw .unexpectedResponse(statusCode: 200) }
        self.init(id: id, email: user.email, emailVerified: user.emailVerified, profile: Profile(wire: user))
    }
}

extension Identifier {
    /// The id a server answer names; one that is not an id is the server's fault, reported as such rather than skipped.
    init(wire text: String) throws(KitError) {
        guard let id = Self(text) else { throw KitError(.server) }
        self = id
    }
}

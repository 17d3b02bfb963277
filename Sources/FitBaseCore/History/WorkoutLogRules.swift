#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A workout log as its writer sent it (REST body or pushed mutation), before any rule is checked.
public struct WorkoutLogDraft: Sendable, Equatable {
    /// The catalog workout done, as sent (a UUID when valid).
    public var workoutId: String
    /// When the workout ended.
    public var completedAt: Date
    /// Minutes actually trained.
    public var duration: Int
    /// How it went, 1–5.
    public var rating: Int?
    /// Energy before the workout, 1–5.
    public var energyBefore: Int?
    /// Energy after the workout, 1–5.
    public var energyAfter: Int?
    /// Free text, at most 1000 characters.
    public var notes: String?

    /// A draft from the input's fields.
    public init(
        workoutId: String, completedAt: Date, duration: Int, rating: Int? = nil, energyBefore: Int? = nil, energyAfter: Int? = nil,
        notes: String? = nil
    ) {
        self.workoutId = workoutId
        self.completedAt = completedAt
        self.duration = duration
        self.rating = rating
        self.energyBefore = energyBefore
        self.energyAfter = energyAfter
        self.notes = notes
    }

    /// The workout to look up in the catalog; `nil` when ``workoutId`` is not a workout id at all.
    public var workoutID: WorkoutID? { WorkoutID(workoutId) }
}

/// A draft whose every field passed ``WorkoutLogRules``, with its catalog workout: all a log still needs is the local
/// day and the cycle position on that day.
public struct CheckedWorkoutLog: Sendable, Equatable {
    /// The checked draft.
    public let draft: WorkoutLogDraft
    /// The catalog workout the draft names.
    public let workout: CatalogWorkout

    /// The log, with the workout's type and title, the local day `completedAt` falls on and the cycle position on it.
    public func log(id: WorkoutLogID, localDate: CalendarDay, cycle position: PhasePosition?) -> WorkoutLog {
        WorkoutLog(
            id: id, workout: workout.id, workoutType: workout.type, workoutTitle: workout.title,
            completedAt: draft.completedAt, localDate: localDate, durationMinutes: draft.duration, rating: draft.rating,
            energyBefore: draft.energyBefore, energyAfter: draft.energyAfter, notes: draft.notes,
            cyclePhase: position?.phase, cycleDay: position?.cycleDay
        )
    }
}

/// The rules of a workout log: a workout of the catalog, done at most five minutes in the future (clocks drift),
/// trained 1–600 minutes, rated 1–5, with notes of at most 1000 characters.
public enum WorkoutLogRules {
    /// How far past `now` a log may be completed, for devices whose clocks run ahead.
    public static let clockTolerance: TimeInterval = 300
    /// The minutes a log may hold.
    public static let durationRange = 1...600
    /// The scale of a rating and of the energy before and after.
    public static let scale = 1...5
    /// The most characters notes may hold.
    public static let notesLimit = 1000

    /// The checked draft, given `workout` — the catalog's answer for ``WorkoutLogDraft/workoutID``, `nil` when there
    /// is none; throws every broken rule at once, in field order.
    public static func checked(_ draft: WorkoutLogDraft, workout: CatalogWorkout?, now: Date) throws(InvalidFields) -> CheckedWorkoutLog {
        var errors: [FieldError] = []
        if workout == nil { errors.append(.init(field: "workoutId", message: "is not a workout of the catalog")) }
        errors += problems(draft, now: now)
        guard let workout, errors.isEmpty else { throw InvalidFields(errors) }
        return CheckedWorkoutLog(draft: draft, workout: workout)
    }

    /// Every broken rule of the fields a user fills in — all but the workout — in field order: what a form checks
    /// before saving, as the server will.
    public static func problems(_ draft: WorkoutLogDraft, now: Date) -> [FieldError] {
        var errors: [FieldError] = []
        if draft.completedAt > now.addingTimeInterval(clockTolerance) { errors.append(.init(field: "completedAt", message: "must not be in the future")) }
        if !durationRange.contains(draft.duration) {
            errors.append(.init(field: "duration", message: "must be between \(durationRange.lowerBound) and \(durationRange.upperBound) minutes"))
        }
        for (field, value) in [("rating", draft.rating), ("energyBefore", draft.energyBefore), ("energyAfter", draft.energyAfter)] {
            if let value, !scale.contains(value) {
                errors.append(.init(field: field, message: "must be between \(scale.lowerBound) and \(scale.upperBound)"))
            }
        }
        if let notes = draft.notes, notes.count > notesLimit {
            errors.append(.init(field: "notes", message: "must be at most \(notesLimit) characters"))
        }
        return errors
    }
}

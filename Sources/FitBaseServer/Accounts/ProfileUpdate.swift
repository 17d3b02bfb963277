import FitBaseAPI
import FitBaseCore
import Foundation

/// Applies a `PATCH /v1/me` body to a profile, collecting every invalid field before refusing.
enum ProfileUpdate {
    static func apply(_ update: Components.Schemas.UserUpdate, to profile: inout Profile, today: String) throws(Problem) {
        var errors: [Problem.FieldError] = []

        if let name = update.displayName {
            do throws(InvalidFields) {
                profile.displayName = try DisplayNameRule.checked(name)
            } catch {
                errors += error.errors.map { .init(field: $0.field, message: $0.message) }
            }
        }
        if let photo = update.photoURL {
            let trimmed = photo.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty {
                profile.photoURL = nil
            } else if trimmed.count > 2048 || URLComponents(string: trimmed)?.scheme?.lowercased() != "https" || URLComponents(string: trimmed)?.host?.isEmpty != false {
                errors.append(.init(field: "photoURL", message: "must be an https URL of at most 2048 characters (empty to remove)"))
            } else {
                profile.photoURL = trimmed
            }
        }
        if let level = update.fitnessLevel { profile.fitnessLevel = level }
        if let goals = update.goals { profile.goals = unique(goals) }
        if let types = update.preferredWorkoutTypes {
            profile.preferredWorkoutTypes = unique(types)
        }
        if let length = update.averageCycleLength {
            if Profile.cycleLengthRange.contains(length) {
                profile.averageCycleLength = length
            } else {
                errors.append(.init(field: "averageCycleLength", message: "must be between 21 and 45 days"))
            }
        }
        if let length = update.averagePeriodLength {
            if Profile.periodLengthRange.contains(length) {
                profile.averagePeriodLength = length
            } else {
                errors.append(.init(field: "averagePeriodLength", message: "must be between 2 and 10 days"))
            }
        }
        if let date = update.lastPeriodStartDate {
            if !isCalendarDate(date) {
                errors.append(.init(field: "lastPeriodStartDate", message: "must be a date written YYYY-MM-DD"))
            } else if date > today {
                errors.append(.init(field: "lastPeriodStartDate", message: "must not be in the future"))
            } else {
                profile.lastPeriodStartDate = date
            }
        }
        if let enabled = update.cycleTrackingEnabled { profile.cycleTrackingEnabled = enabled }
        if let enabled = update.notificationsEnabled { profile.notificationsEnabled = enabled }
        if let time = update.preferredWorkoutTime {
            if isTimeOfDay(time) {
                profile.preferredWorkoutTime = time
            } else {
                errors.append(.init(field: "preferredWorkoutTime", message: "must be a time of day written HH:mm (00:00–23:59)"))
            }
        }
        if let zone = update.timeZone {
            if LocalCalendar.isAcceptedZoneName(zone) {
                profile.timeZone = zone
            } else {
                errors.append(.init(field: "timeZone", message: "must be an IANA time zone such as Europe/Lisbon"))
            }
        }
        if let share = update.privacy?.shareWorkoutData { profile.shareWorkoutData = share }
        if let preferences = update.notificationPreferences {
            errors += apply(preferences, to: &profile.notificationPreferences)
        }
        if let equipment = update.availableEquipment {
            profile.availableEquipment = unique(equipment.filter { $0 != .none })
        }

        guard errors.isEmpty else { throw .validationFailed(errors) }
    }

    /// Changes the switches given; quiet hours are set (or, both empty, removed) together.
    private static func apply(_ update: Components.Schemas.NotificationPreferences, to preferences: inout NotificationPreferences) -> [Problem.FieldError] {
        if let value = update.newMember { preferences.newMember = value }
        if let value = update.rankChange { preferences.rankChange = value }
        if let value = update.weekEnded { preferences.weekEnded = value }
        if let value = update.workoutReminder { preferences.workoutReminder = value }
        if let value = update.periodReminder { preferences.periodReminder = value }
        if let value = update.showSensitiveContent { preferences.showSensitiveContent = value }
        guard update.quietHoursStart != nil || update.quietHoursEnd != nil else { return [] }
        let start = update.quietHoursStart ?? preferences.quietHoursStart ?? ""
        let end = update.quietHoursEnd ?? preferences.quietHoursEnd ?? ""
        if start.isEmpty && end.isEmpty {
            preferences.quietHoursStart = nil
            preferences.quietHoursEnd = nil
            return []
        }
        var errors: [Problem.FieldError] = []
        for (field, value) in [("notificationPreferences.quietHoursStart", start), ("notificationPreferences.quietHoursEnd", end)]
        where NotificationPreferences.minuteOfDay(value) == nil {
            errors.append(.init(field: field, message: "must be a time of day written HH:mm (00:00–23:59), set together with the other end (both empty to remove quiet hours)"))
        }
        guard errors.isEmpty else { return errors }
        preferences.quietHoursStart = start
        preferences.quietHoursEnd = end
        return []
    }

    private static func unique<T: Hashable>(_ values: [T]) -> [T] {
        var seen = Set<T>()
        return values.filter { seen.insert($0).inserted }
    }

    /// `YYYY-MM-DD` naming a real day (no 2026-02-30).
    static func isCalendarDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)) else { return false }
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        return back.year == year && back.month == month && back.day == day
    }

    private static func isTimeOfDay(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard text.count == 5, parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            let hour = Int(parts[0]), let minute = Int(parts[1])
        else { return false }
        return (0...23).contains(hour) && (0...59).contains(minute)
    }
}

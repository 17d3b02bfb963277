import Crypto
import FitBaseCore
import Foundation
import Logging
import SQLKit
import ServiceLifecycle

/// Queues the reminders that are due: a workout reminder at the profile's `preferredWorkoutTime` on the days the
/// user's active plans train (every day without one), unless a workout was already logged that day; and, when asked
/// for, a reminder the day before the cycle predictor expects the next period (at the same time, or 09:00).
///
/// Times are the user's local time (``PushQueue/timeZone(of:devices:)``: the profile's time zone, else the one the
/// newest device reported). A reminder is due from its minute for an hour, so a scheduler that missed a minute — or
/// a day whose minute does not exist, 02:30 when daylight saving starts — still sends it, and a minute that happens
/// twice (when it ends) sends it once: each (user, kind, local day) is a row of `push_reminder_claims`, inserted with
/// `ON CONFLICT DO NOTHING` in the transaction that queues the push, so whichever instance inserts it sends it and
/// every other skips. The row's key is an HMAC of (user, kind, day) under a key derived from the master key: the table
/// does not say that someone's period was expected on a given day. A reminder whose minute falls in the user's quiet hours is dropped (not held: a reminder to
/// train at 07:00 is no use at 08:00).
struct ReminderScheduler: Sendable {
    enum Kind: String, Sendable {
        case workout, period

        var type: String {
            switch self {
            case .workout: "workout_reminder"
            case .period: "period_reminder"
            }
        }
    }

    /// How long after its minute a reminder may still go out.
    static let window = 60
    /// When a period reminder goes out without a preferred workout time.
    static let defaultPeriodReminderTime = "09:00"
    /// Sent-reminder rows are kept this long (longer than any local day lasts anywhere).
    static let retention: TimeInterval = 3 * 86_400

    let database: Database
    let cycle: CycleReckoner
    /// Keys the claims (``MasterKey/derivedKey(for:)``).
    let claimKey: SymmetricKey

    /// Queues every reminder due at `now`; returns how many this call queued (another instance may queue others).
    @discardableResult
    func run(at now: Date) async throws -> Int {
        let users = try await database.withConnection { db in
            try await db.select().distinct().column(SQLColumn("user_id", table: "devices")).from("devices")
                .join("user_profiles", on: SQLColumn("user_id", table: "user_profiles"), .equal, SQLColumn("user_id", table: "devices"))
                .where(SQLColumn("notifications_enabled", table: "user_profiles"), .equal, SQLBind(true))
                .where { candidates in
                    candidates.where(SQLColumn("preferred_workout_time", table: "user_profiles"), .isNot, SQLLiteral.null)
                        .orWhere(SQLColumn("cycle_tracking_enabled", table: "user_profiles"), .equal, SQLBind(true))
                }
                .all().map { UserID(rawValue: try $0.decode(column: "user_id", as: UUID.self)) }
        }
        var queued = 0
        for user in users {
            for (kind, day, content) in try await due(for: user, at: now) {
                queued += try await send(kind, content, to: user, day: day, now: now) ? 1 : 0
            }
        }
        return queued
    }

    /// The reminders due for `user` at `now`, with the local day each is for.
    func due(for user: UserID, at now: Date) async throws -> [(Kind, CalendarDay, PushContent)] {
        let vault = cycle.profiles.vault
        let (profile, devices) = try await database.withConnection { db in
            (try await ProfileStore.profile(of: user, on: db, vault: vault), try await DeviceStore.devices(of: [user], on: db))
        }
        guard profile.notificationsEnabled == true, !devices.isEmpty else { return [] }
        let preferences = profile.notificationPreferences
        let zone = PushQueue.timeZone(of: profile, devices: devices)
        let today = LocalCalendar.day(of: now, in: zone.identifier)
        let minute = PushQueue.minuteOfDay(now, in: zone)
        let endOfDay = Self.startOfDay(today.adding(days: 1), in: zone)
        func isDue(_ time: String?) -> Bool {
            guard let target = time.flatMap(NotificationPreferences.minuteOfDay) else { return false }
            return (target..<target + Self.window).contains(minute) && !preferences.isQuiet(atMinute: target)
        }
        var reminders: [(Kind, CalendarDay, PushContent)] = []
        if preferences.workoutReminder, isDue(profile.preferredWorkoutTime) {
            let (training, plan, logged) = try await database.withConnection { db in
                let plans = try await PlanStore.activePlans(of: user, on: today, db: db)
                let training = plans.isEmpty || plans.contains { $0.trains(on: today) }
                let logged = try await db.select().column("id").from("workout_logs").where("user_id", .equal, user.rawValue)
                    .where("local_date", .equal, today.description).limit(1).first() != nil
                return (training, plans.first { $0.trains(on: today) }?.name, logged)
            }
            if training && !logged {
                let body = plan.map { "Today's \($0) session is waiting." } ?? "Time for today's workout."
                reminders.append((.workout, today, content(.workout, title: "Workout reminder", body: body, on: today, until: endOfDay, preferences)))
            }
        }
        if preferences.periodReminder, profile.cycleTrackingEnabled, isDue(profile.preferredWorkoutTime ?? Self.defaultPeriodReminderTime),
            let prediction = try await cycle.prediction(for: user, on: today, profile: profile), prediction.nextPeriodStart == today.adding(days: 1)
        {
            reminders.append((.period, today, content(.period, title: "Cycle", body: "Your period is expected tomorrow.", on: today, until: endOfDay, preferences)))
        }
        return reminders
    }

    /// A reminder's push: its kind and real text only for a user who asked to see health and cycle content on the lock
    /// screen. Otherwise nothing in it — title, body, type, collapse id — tells a period reminder from a workout one
    /// (payloads and collapse ids are seen by more than the user: the lock screen, notification logs, a managed phone).
    private func content(_ kind: Kind, title: String, body: String, on day: CalendarDay, until end: Date, _ preferences: NotificationPreferences) -> PushContent {
        let sensitive = preferences.showSensitiveContent
        return PushContent(
            type: sensitive ? kind.type : Self.discreetType, title: sensitive ? title : "Reminder",
            body: sensitive ? body : PushQueue.discreetBody, threadID: "reminders",
            collapseID: sensitive ? "reminder-\(kind.rawValue)" : "reminder", expiration: end, date: day.description
        )
    }

    /// The type of a reminder that does not say what it is about.
    static let discreetType = "reminder"

    /// The claim of (user, kind, day): `HMAC-SHA-256(claim key, "user|kind|day")`.
    func claim(_ kind: Kind, of user: UserID, on day: CalendarDay) -> String {
        let message = "\(user.rawValue.uuidString.lowercased())|\(kind.rawValue)|\(day.description)"
        return hexString(HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: claimKey))
    }

    /// Claims (user, kind, day) and queues the push in one transaction; `false` when another run already had it.
    private func send(_ kind: Kind, _ content: PushContent, to user: UserID, day: CalendarDay, now: Date) async throws -> Bool {
        try await database.transaction { db in
            let claimed = try await db.insert(into: "push_reminder_claims").columns("claim", "user_id", "sent_at")
                .values(SQLBind(claim(kind, of: user, on: day)), SQLBind(user.rawValue), SQLBind(now))
                .ignoringConflicts(with: ["claim"])
                .returning("user_id").all()
            guard !claimed.isEmpty else { return false }
            try await PushQueue.enqueue(content, badge: nil, to: try await DeviceStore.devices(of: [user], on: db), user: user, sendAt: now, now: now, on: db)
            return true
        }
    }

    /// Forgets sent reminders older than ``retention`` (the retention service calls it).
    static func purge(now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "push_reminder_claims").where("sent_at", .lessThan, now.addingTimeInterval(-retention)).run()
    }

    static func startOfDay(_ day: CalendarDay, in zone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = day.description.split(separator: "-").compactMap { Int($0) }
        return calendar.startOfDay(for: calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12)) ?? Date(timeIntervalSince1970: TimeInterval(day.daysSince1970) * 86_400))
    }
}

extension PeriodicService {
    /// Runs `scheduler` every `interval` (``ServerConfiguration/reminderInterval``: a minute) on every instance, at the
    /// application's time.
    static func reminders(_ scheduler: ReminderScheduler, every interval: Duration, clock: ServerClock, logger: Logger) -> PeriodicService {
        PeriodicService(interval: interval, logger: logger, failure: "reminders failed") {
            let queued = try await scheduler.run(at: clock.now)
            if queued > 0 { logger.info("queued reminders", metadata: ["reminders": "\(queued)"]) }
        }
    }
}

extension PlanStore {
    /// The user's plans under way on `day`: started, not ended, not completed.
    static func activePlans(of user: UserID, on day: CalendarDay, db: any SQLDatabase) async throws -> [TrainingPlan] {
        try await db.select().columns(columns).from("training_plans").where("user_id", .equal, user.rawValue)
            .where("is_completed", .equal, false).where("start_date", .lessThanOrEqual, day.description).all()
            .map { try plan($0).plan }.filter { $0.endDate.map { $0 >= day } ?? true }
    }
}

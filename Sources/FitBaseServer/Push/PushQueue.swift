import FitBaseCore
import Foundation
import SQLKit

/// What one push says and how Apple should treat it, before it is addressed to a device.
struct PushContent: Sendable, Equatable {
    /// `fitbase.type`: the notification's type (`new_member`, `rank_change`, `week_ended`) or the reminder's
    /// (`workout_reminder`, `period_reminder`).
    var type: String
    var title: String
    var body: String
    /// `aps.thread-id`: the group a notification concerns, or `reminders`.
    var threadID: String
    /// `apns-collapse-id`: a later push with the same id replaces an undelivered earlier one.
    var collapseID: String?
    /// `apns-expiration`: after this Apple stops trying an offline device.
    var expiration: Date?
    var notificationID: NotificationID?
    var groupID: GroupID?
    /// `fitbase.date`: the local day a reminder is for.
    var date: String?
}

/// Queues pushes in the outbox (kind `push`, one job per device, so each device is retried and settled on its own),
/// in the transaction of the change that causes them; ``PushWorker`` sends them.
///
/// Push jobs are not sealed like e-mail: they hold the lock-screen text (the feed's notification, already stored in the
/// clear in `notifications`, or a reminder's) and the device token (in the clear in `devices`); the body is blanked
/// once the job is settled.
enum PushQueue {
    /// The outbox `kind` of a push job.
    static let kind = "push"

    /// What a lock-screen reminder says when the user has not asked to see health and cycle content there.
    static let discreetBody = "You have a new reminder"

    /// A feed notification was just written for `user`: queues its push to each of their devices if they want it,
    /// with the badge at their unread count, held to the end of their quiet hours.
    static func notificationAdded(
        _ id: NotificationID, kind: NotificationKind, to user: UserID, group: GroupID?, message: String, now: Date, on db: any SQLDatabase
    ) async throws {
        let profile = try await ProfileStore.settings(of: user, on: db)
        guard profile.notificationsEnabled == true, wants(kind, profile.notificationPreferences) else { return }
        let devices = try await DeviceStore.devices(of: [user], on: db)
        guard !devices.isEmpty else { return }
        let unread = try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("notifications")
            .where("user_id", .equal, user.rawValue).where("expires_at", .greaterThan, now).where("read_at", .is, SQLLiteral.null)
            .first()?.decode(column: "n", as: Int.self) ?? 0
        let zone = timeZone(of: profile, devices: devices)
        let sendAt = quietHoursEnd(profile.notificationPreferences, at: now, in: zone) ?? now
        let content = PushContent(
            type: kind.rawValue, title: title(of: kind), body: message, threadID: group.map { "group-\($0)" } ?? "fitbase",
            collapseID: collapseID(of: kind, group: group),
            expiration: sendAt.addingTimeInterval(24 * 3600), notificationID: id, groupID: group
        )
        try await enqueue(content, badge: unread, to: devices, user: user, sendAt: sendAt, now: now, on: db)
    }

    /// Queues `content` to each of `devices` (all `user`'s), due at `sendAt`; wakes this instance's worker after commit.
    static func enqueue(
        _ content: PushContent, badge: Int?, to devices: [DeviceRecord], user: UserID, sendAt: Date, now: Date, on db: any SQLDatabase
    ) async throws {
        guard !devices.isEmpty else { return }
        let body = try payload(content, badge: badge)
        var insert = db.insert(into: "outbox")
            .columns("id", "kind", "user_id", "device_token", "payload", "status", "attempts", "next_attempt_at", "created_at")
        for device in devices {
            let message = PushMessage(
                deviceToken: device.token, environment: device.environment, topic: device.bundleID, pushType: .alert, priority: 10,
                expiration: content.expiration, collapseID: content.collapseID, id: UUID.random(), payload: body
            )
            insert = insert.values(
                SQLBind(message.id), SQLBind(kind), SQLBind(user.rawValue), SQLBind(device.token), SQLBind(try JSONEncoder().encode(message)),
                SQLBind(OutboxStatus.pending.rawValue), SQLBind(0), SQLBind(sendAt), SQLBind(now)
            )
        }
        try await insert.run()
        if let hooks = TransactionHooks.current, let wake = hooks.pushWake {
            hooks.afterCommit(key: "push.wake") { wake.wake() }
        }
    }

    /// The APNs body: `{"aps": {"alert": {"title", "body"}, "badge", "sound", "thread-id"}, "fitbase": {...}}`.
    static func payload(_ content: PushContent, badge: Int?) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(
            APNsBody(
                aps: .init(alert: .init(title: content.title, body: content.body), badge: badge, sound: "default", threadID: content.threadID),
                fitbase: .init(
                    type: content.type, notificationId: content.notificationID?.description, groupId: content.groupID?.description, date: content.date
                )
            )
        )
    }

    private struct APNsBody: Encodable {
        struct APS: Encodable {
            struct Alert: Encodable {
                var title: String
                var body: String
            }

            var alert: Alert
            var badge: Int?
            var sound: String
            var threadID: String

            enum CodingKeys: String, CodingKey {
                case alert, badge, sound
                case threadID = "thread-id"
            }
        }

        struct FitBase: Encodable {
            var type: String
            var notificationId: String?
            var groupId: String?
            var date: String?
        }

        var aps: APS
        var fitbase: FitBase
    }

    static func wants(_ kind: NotificationKind, _ preferences: NotificationPreferences) -> Bool {
        switch kind {
        case .newMember: preferences.newMember
        case .rankChange: preferences.rankChange
        case .weekEnded: preferences.weekEnded
        }
    }

    static func title(of kind: NotificationKind) -> String {
        switch kind {
        case .newMember: "New group member"
        case .rankChange: "You were overtaken"
        case .weekEnded: "The challenge week is over"
        }
    }

    /// A newer standing replaces an older one still waiting on the device; each new member is news of its own.
    static func collapseID(of kind: NotificationKind, group: GroupID?) -> String? {
        guard let group else { return nil }
        return switch kind {
        case .newMember: nil
        case .rankChange: "rank-\(group)"
        case .weekEnded: "week-\(group)"
        }
    }

    /// The user's time zone for pushes: the profile's, else the one of the device registered last, else UTC.
    static func timeZone(of profile: Profile, devices: [DeviceRecord]) -> TimeZone {
        LocalCalendar.timeZone(profile.timeZone ?? devices.max { $0.registeredAt < $1.registeredAt }?.timeZone)
    }

    /// The minute of the local day `instant` is in.
    static func minuteOfDay(_ instant: Date, in zone: TimeZone) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.hour, .minute], from: instant)
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }

    /// When `now` falls in the quiet hours, the instant they end (the next local `quietHoursEnd`); otherwise `nil`.
    static func quietHoursEnd(_ preferences: NotificationPreferences, at now: Date, in zone: TimeZone) -> Date? {
        guard preferences.isQuiet(atMinute: minuteOfDay(now, in: zone)), let end = preferences.quietHoursEnd.flatMap(NotificationPreferences.minuteOfDay)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.nextDate(
            after: now, matching: DateComponents(hour: end / 60, minute: end % 60, second: 0), matchingPolicy: .nextTime
        ).map { Date(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate.rounded()) }
    }
}

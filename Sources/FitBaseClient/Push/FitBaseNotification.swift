import FitBaseCore
import Foundation

/// A push from a FitBase server, parsed from what the app received: `userInfo` of `UNNotificationContent` /
/// `application(_:didReceiveRemoteNotification:)`, or the raw JSON payload.
///
/// ```swift
/// func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
///     switch FitBaseNotification(userInfo: response.notification.request.content.userInfo) {
///     case .rankChange(let push)?: router.showLeaderboard(groupID: push.groupID)
///     case .workoutReminder?: router.showToday()
///     default: break
///     }
/// }
/// ```
public enum FitBaseNotification: Sendable, Equatable {
    /// Someone joined the user's group.
    case newMember(FeedPush)
    /// Someone overtook the user on a leaderboard of their group.
    case rankChange(FeedPush)
    /// A challenge week closed; the text gives the user's standing.
    case weekEnded(FeedPush)
    /// Time for the day's workout.
    case workoutReminder(ReminderPush)
    /// The cycle predictor expects the next period tomorrow.
    case periodReminder(ReminderPush)
    /// A reminder that does not say what it is about: the user has not turned on `showSensitiveContent`, so neither
    /// the lock screen nor the payload tells a period reminder from a workout one. Open the app's today screen.
    case reminder(ReminderPush)
    /// A FitBase push of a type this SDK does not know yet (a newer server).
    case other(type: String, alert: PushAlert)

    /// A push of the notification feed (the same notification `GET /v1/notifications` lists).
    public struct FeedPush: Sendable, Equatable {
        /// The feed notification's id (mark it read with `POST /v1/notifications/{id}/read`).
        public var notificationID: NotificationID?
        /// The group it concerns.
        public var groupID: GroupID?
        public var alert: PushAlert

        public init(notificationID: NotificationID?, groupID: GroupID?, alert: PushAlert) {
            self.notificationID = notificationID
            self.groupID = groupID
            self.alert = alert
        }
    }

    /// A reminder.
    public struct ReminderPush: Sendable, Equatable {
        /// The user's local day it is for, `YYYY-MM-DD`.
        public var date: String?
        public var alert: PushAlert

        public init(date: String?, alert: PushAlert) {
            self.date = date
            self.alert = alert
        }
    }

    /// What the lock screen showed.
    public struct PushAlert: Sendable, Equatable {
        public var title: String?
        public var body: String?
        /// The app icon's badge: the user's unread notifications (absent on reminders, which leave it as it is).
        public var badge: Int?

        public init(title: String? = nil, body: String? = nil, badge: Int? = nil) {
            self.title = title
            self.body = body
            self.badge = badge
        }
    }

    /// Parses `userInfo`; `nil` when it is not a FitBase push (no `fitbase` dictionary with a `type`).
    public init?(userInfo: [AnyHashable: Any]) {
        guard let fitbase = userInfo["fitbase"] as? [String: Any], let type = fitbase["type"] as? String else { return nil }
        let aps = userInfo["aps"] as? [String: Any]
        var alert = PushAlert(badge: Self.integer(aps?["badge"]))
        switch aps?["alert"] {
        case let dictionary as [String: Any]:
            alert.title = dictionary["title"] as? String
            alert.body = dictionary["body"] as? String
        case let text as String:
            alert.body = text
        default:
            break
        }
        let feed = FeedPush(
            notificationID: (fitbase["notificationId"] as? String).flatMap(NotificationID.init), groupID: (fitbase["groupId"] as? String).flatMap(GroupID.init),
            alert: alert)
        let reminder = ReminderPush(date: fitbase["date"] as? String, alert: alert)
        switch type {
        case "new_member": self = .newMember(feed)
        case "rank_change": self = .rankChange(feed)
        case "week_ended": self = .weekEnded(feed)
        case "workout_reminder": self = .workoutReminder(reminder)
        case "period_reminder": self = .periodReminder(reminder)
        case "reminder": self = .reminder(reminder)
        default: self = .other(type: type, alert: alert)
        }
    }

    /// A JSON number as `JSONSerialization` or UIKit hands it over.
    private static func integer(_ value: Any?) -> Int? {
        switch value {
        case let value as Int: value
        case let value as NSNumber: value.intValue
        default: nil
        }
    }

    /// Parses the raw JSON payload (`{"aps": {...}, "fitbase": {...}}`); `nil` when it is not JSON or not a FitBase push.
    public init?(payload: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else { return nil }
        self.init(userInfo: object)
    }

    /// The push's type as the server names it (`new_member`, `rank_change`, `week_ended`, `workout_reminder`,
    /// `period_reminder`, …).
    public var type: String {
        switch self {
        case .newMember: "new_member"
        case .rankChange: "rank_change"
        case .weekEnded: "week_ended"
        case .workoutReminder: "workout_reminder"
        case .periodReminder: "period_reminder"
        case .reminder: "reminder"
        case .other(let type, _): type
        }
    }

    /// What the lock screen showed.
    public var alert: PushAlert {
        switch self {
        case .newMember(let push), .rankChange(let push), .weekEnded(let push): push.alert
        case .workoutReminder(let push), .periodReminder(let push), .reminder(let push): push.alert
        case .other(_, let alert): alert
        }
    }
}

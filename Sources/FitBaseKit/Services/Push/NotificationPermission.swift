import Foundation

/// The system's notification permission and remote registration: `UNUserNotificationCenter` and
/// `UIApplication.registerForRemoteNotifications()` on Apple platforms (``UserNotificationsPermission``), a fake in
/// tests. The device token itself arrives through the app delegate, which hands it to ``PushService``.
public protocol NotificationPermissionProvider: Sendable {
    /// Asks for alert, badge and sound permission (the system prompt shows once; later calls answer at once) and
    /// whether it is granted.
    func requestAuthorization() async throws -> Bool

    /// Whether notifications are allowed now (`authorized`, `provisional` or `ephemeral`), without prompting.
    func isAuthorized() async -> Bool

    /// Asks the system for this device's push token; it arrives in
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`.
    func registerForRemoteNotifications() async
}

#if canImport(UserNotifications)
import Foundation
import UserNotifications
#if canImport(UIKit)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// ``NotificationPermissionProvider`` over `UNUserNotificationCenter` (alert, badge and sound) and the
/// application's `registerForRemoteNotifications()`. The device token arrives in the app delegate's
/// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`, which hands it to ``PushService``.
public struct UserNotificationsPermission: NotificationPermissionProvider {
    /// A provider over the app's notification center.
    public init() {}

    public func requestAuthorization() async throws -> Bool {
        try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound])
    }

    /// Allowed unless the user refused or was never asked: `authorized`, `provisional` and `ephemeral` all deliver.
    public func isAuthorized() async -> Bool {
        switch await UNUserNotificationCenter.current().notificationSettings().authorizationStatus {
        case .notDetermined, .denied: false
        default: true
        }
    }

    @MainActor
    public func registerForRemoteNotifications() async {
        #if canImport(UIKit)
        UIApplication.shared.registerForRemoteNotifications()
        #elseif canImport(AppKit)
        NSApplication.shared.registerForRemoteNotifications()
        #endif
    }
}
#endif

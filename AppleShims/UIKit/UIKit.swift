// Shim of the part of UIKit FitBase's adapters call (remote-notification registration, the app's foreground
// notifications), written from Apple's documentation: same names and main-actor isolation as the SDK. CI only
// (scripts/ci/apple-adapters.sh). `_UIKitShim` reports what the app asked for to AppleAdapterTests.
import Foundation

/// An abstract interface for responding to and handling events.
@MainActor open class UIResponder: NSObject {}

/// The centralized point of control and coordination for apps running in iOS.
@MainActor open class UIApplication: UIResponder {
    private static let application = UIApplication()

    /// The singleton app instance.
    public class var shared: UIApplication { application }

    /// Registers to receive remote notifications through Apple Push Notification service.
    public func registerForRemoteNotifications() {
        _UIKitShim.registrations += 1
    }

    /// A Boolean value that indicates whether the app is currently registered for remote notifications.
    public var isRegisteredForRemoteNotifications: Bool { _UIKitShim.registrations > 0 }

    /// A notification that posts shortly before an app leaves the background state on its way to becoming the active
    /// app.
    nonisolated public static let willEnterForegroundNotification = Notification.Name(
        "UIApplicationWillEnterForegroundNotification")
    /// A notification that posts when the app becomes active.
    nonisolated public static let didBecomeActiveNotification = Notification.Name(
        "UIApplicationDidBecomeActiveNotification")
    /// A notification that posts when the app enters the background.
    nonisolated public static let didEnterBackgroundNotification = Notification.Name(
        "UIApplicationDidEnterBackgroundNotification")
}

/// What the app asked of UIKit, for AppleAdapterTests.
@MainActor public enum _UIKitShim {
    /// How many times the app called `registerForRemoteNotifications()`.
    public static var registrations = 0
}

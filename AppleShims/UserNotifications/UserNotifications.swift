// Shim of the part of Apple's UserNotifications FitBase's adapter calls (the authorization prompt and settings),
// written from Apple's documentation: same names, labels, optionality and async/throws as the SDK. CI only
// (scripts/ci/apple-adapters.sh). `_UserNotificationsShim` scripts the user's answer for AppleAdapterTests.
import Foundation
import Synchronization

/// Options that determine the authorized features of local and remote notifications.
public struct UNAuthorizationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The ability to update the app's badge.
    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    /// The ability to play sounds.
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    /// The ability to display alerts.
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
    /// The ability to display notifications in a CarPlay environment.
    public static let carPlay = UNAuthorizationOptions(rawValue: 1 << 3)
    /// The ability to play sounds for critical alerts.
    public static let criticalAlert = UNAuthorizationOptions(rawValue: 1 << 4)
    /// An option indicating the system should display a button for in-app notification settings.
    public static let providesAppNotificationSettings = UNAuthorizationOptions(rawValue: 1 << 5)
    /// The ability to post noninterrupting notifications provisionally to the Notification Center.
    public static let provisional = UNAuthorizationOptions(rawValue: 1 << 6)
}

/// Constants indicating whether the app is allowed to schedule notifications.
public enum UNAuthorizationStatus: Int, Sendable {
    /// The user hasn't yet made a choice about whether the app is allowed to schedule notifications.
    case notDetermined = 0
    /// The app isn't authorized to schedule or receive notifications.
    case denied = 1
    /// The app is authorized to schedule or receive notifications.
    case authorized = 2
    /// The application is provisionally authorized to post noninterruptive user notifications.
    case provisional = 3
    /// The app is authorized to schedule or receive notifications for a limited amount of time.
    case ephemeral = 4
}

/// The object for managing notification-related settings and the authorization status of your app.
public final class UNNotificationSettings: NSObject {
    /// The app's ability to schedule and receive local and remote notifications.
    public let authorizationStatus: UNAuthorizationStatus

    init(authorizationStatus: UNAuthorizationStatus) {
        self.authorizationStatus = authorizationStatus
    }
}

/// The central object for managing notification-related activities for your app or app extension.
public final class UNUserNotificationCenter: NSObject {
    override init() {}

    /// Returns your app's notification center.
    public class func current() -> UNUserNotificationCenter { UNUserNotificationCenter() }

    /// Requests a person's authorization to allow local and remote notifications for your app.
    public func requestAuthorization(
        options: UNAuthorizationOptions = [], completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        let answer = _UserNotificationsShim.state.withLock { state -> Result<Bool, any Error> in
            if let failure = state.failure {
                state.failure = nil
                return .failure(failure)
            }
            state.requestedOptions.append(options)
            // The prompt shows once; later requests answer with the user's earlier choice.
            if state.status == .notDetermined {
                state.prompts += 1
                state.status =
                    state.userAllows ? (options.contains(.provisional) ? .provisional : .authorized) : .denied
            }
            return .success(state.status != .denied)
        }
        switch answer {
        case .success(let granted): completionHandler(granted, nil)
        case .failure(let error): completionHandler(false, error)
        }
    }

    /// Requests a person's authorization to allow local and remote notifications for your app.
    public func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            requestAuthorization(options: options) { granted, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: granted) }
            }
        }
    }

    /// Retrieves the authorization and feature-related settings for your app.
    public func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void) {
        let status = _UserNotificationsShim.state.withLock { $0.status }
        completionHandler(UNNotificationSettings(authorizationStatus: status))
    }

    /// Retrieves the authorization and feature-related settings for your app.
    public func notificationSettings() async -> UNNotificationSettings {
        UNNotificationSettings(authorizationStatus: _UserNotificationsShim.state.withLock { $0.status })
    }
}

/// The user's answers to the notification prompt, for AppleAdapterTests.
public enum _UserNotificationsShim {
    struct State: Sendable {
        var status: UNAuthorizationStatus = .notDetermined
        var userAllows = true
        var prompts = 0
        var requestedOptions: [UNAuthorizationOptions] = []
        var failure: (any Error)?
    }

    static let state = Mutex(State())

    /// Not asked yet; the user will allow.
    public static func reset() { state.withLock { $0 = State() } }

    /// The status now (as Settings › Notifications would set it).
    public static func setStatus(_ status: UNAuthorizationStatus) { state.withLock { $0.status = status } }

    /// What the user answers when the prompt shows.
    public static func setUserAllows(_ allows: Bool) { state.withLock { $0.userAllows = allows } }

    /// The next authorization request fails with `error`.
    public static func failNextRequest(with error: any Error) { state.withLock { $0.failure = error } }

    /// How many times the prompt showed, and the options of every request.
    public static var prompts: (count: Int, options: [UNAuthorizationOptions]) {
        state.withLock { ($0.prompts, $0.requestedOptions) }
    }
}

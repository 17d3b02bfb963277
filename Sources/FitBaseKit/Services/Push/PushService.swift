import FitBaseClient
import FitBaseCore
import Foundation

/// The device's APNs token as the app handed it over, and the account it is registered for.
public struct PushRegistration: Sendable, Equatable {
    /// The token from `didRegisterForRemoteNotificationsWithDeviceToken`.
    public var token: Data
    /// The APNs gateway the token belongs to.
    public var environment: PushEnvironment
    /// The account the server sends this device's pushes for; `nil` while kept for the next sign-in (signed out, or the
    /// last registration did not reach the server).
    public var userID: UserID?

    /// A registration of `token`.
    public init(token: Data, environment: PushEnvironment, userID: UserID?) {
        self.token = token
        self.environment = environment
        self.userID = userID
    }
}

/// Push set-up (seed 004's notifications): the device's APNs token registered for the signed-in user and kept on the
/// device, so that every new session — a sign-in, a sign-up, another account on the same phone — registers it again,
/// a changed token replaces the old one (which is unregistered), and signing out removes it while the session still
/// works. Which pushes the user wants is the profile's (``Profile/notificationPreferences``); where a tapped push
/// leads is ``AppModel/openNotification(userInfo:)``'s.
///
/// ```swift
/// // Where the app asks (after onboarding, or a "Turn on reminders" button):
/// let allowed = try await dependencies.push.requestPermissionAndRegister()
///
/// func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken token: Data) {
///     Task { try? await dependencies.push.registerDevice(token: token, environment: .production) }
/// }
/// ```
public protocol PushService: Sendable {
    /// Asks for the permission to notify (the system prompt shows the first time; later calls answer at once) and,
    /// when it is granted, asks the system for this device's push token, which arrives in the app delegate's
    /// `didRegisterForRemoteNotificationsWithDeviceToken` for ``registerDevice(token:environment:)``. Whether
    /// notifications are allowed; `false` without a ``NotificationPermissionProvider``. Fails with ``KitError/Kind/forbidden``
    /// when the system refuses to ask (notifications not allowed for the app).
    func requestPermissionAndRegister() async throws(KitError) -> Bool
    /// Registers `token` for the signed-in user — call it on every launch: the registration also carries the device's
    /// time zone (when reminders come), locale and app version — or, signed out, keeps it for the next sign-in. A token
    /// other than the one registered before for this user unregisters that one.
    func registerDevice(token: Data, environment: PushEnvironment) async throws(KitError)
    /// The token this device keeps, and whom it is registered for.
    func registration() async -> PushRegistration?
}

extension NotificationPermissionProvider {
    /// What ``PushService/requestPermissionAndRegister()`` does with the system: asks for the permission and, when it
    /// is granted, for the device's push token.
    func requestPermissionAndRegister() async throws(KitError) -> Bool {
        let granted: Bool
        do {
            granted = try await requestAuthorization()
        } catch {
            if Task.isCancelled { throw .cancelled }
            throw KitError(.forbidden, message: "Notifications can't be turned on for this app (\(error)).")
        }
        if granted { await registerForRemoteNotifications() }
        return granted
    }
}

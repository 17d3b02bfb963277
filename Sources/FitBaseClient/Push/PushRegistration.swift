import FitBaseAPI
import FitBaseCore
import Foundation

/// Which APNs gateway a device token belongs to: `sandbox` for a build run from Xcode, `production` for TestFlight
/// and the App Store (the `aps-environment` entitlement the build was signed with).
public enum PushEnvironment: String, Sendable, CaseIterable {
    case sandbox
    case production
}

/// A device registered for pushes, as the server answers it.
public typealias PushDevice = Components.Schemas.Device

extension FitBaseClient {
    /// Registers this device's APNs token for the signed-in user; call it from
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` on every launch.
    ///
    /// ```swift
    /// func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken token: Data) {
    ///     Task { try await fitbase.registerDevice(token: token, environment: .production) }
    /// }
    /// ```
    ///
    /// The device belongs to this session: signing out stops its pushes. The registration carries this install's id (kept
    /// by the token store: the Keychain on iOS), so a token another account holds moves here only from the install that
    /// registered it (`.problem` `idTaken` otherwise). Locale, time zone and app version default to
    /// the process's (`Locale.current`, `TimeZone.current`, `CFBundleShortVersionString (CFBundleVersion)`); the time
    /// zone times reminders when the profile has none. Fails with `.problem` `validationFailed` naming the field at
    /// fault, `.notSignedIn` without a session.
    @discardableResult
    public func registerDevice(
        token: Data, environment: PushEnvironment, bundleId: String? = Bundle.main.bundleIdentifier, locale: String? = FitBaseClient.processLocale,
        timeZone: String? = TimeZone.current.identifier, appVersion: String? = FitBaseClient.processAppVersion
    ) async throws(FitBaseError) -> PushDevice {
        let body = Components.Schemas.DeviceRegistration(
            platform: "ios", environment: environment.rawValue, bundleId: bundleId ?? "", locale: locale, timeZone: timeZone, appVersion: appVersion,
            installId: await session.installID()
        )
        let path = Operations.RegisterDevice.Input.Path(deviceToken: hexString(token))
        let output = try await call { try await self.api.registerDevice(path: path, body: .json(body)) }
        // 201 for a token new to the server, 200 for one it had.
        if case .created(let created) = output { return try FitBaseError.decoding { try created.body.json } }
        return try FitBaseError.decoding { try output.ok.body.json }
    }

    /// Stops pushes to this device (the user turned them off in the app); signing out does it too. A token the server
    /// does not know for this user is not an error.
    public func unregisterDevice(token: Data) async throws(FitBaseError) {
        do throws(FitBaseError) {
            _ = try await call { try await self.api.deleteDevice(path: .init(deviceToken: hexString(token))).noContent }
        } catch where error.statusCode == 404 {
            return
        }
    }

    /// The signed-in user's devices registered for pushes, most recently registered first (`current` marks this
    /// session's).
    public func devices() async throws(FitBaseError) -> [PushDevice] {
        var devices: [PushDevice] = []
        var cursor: String?
        repeat {
            let page = cursor
            let body = try await call { try await self.api.listDevices(query: .init(limit: 100, cursor: page)).ok.body.json }
            devices += body.items
            cursor = body.nextCursor
        } while cursor != nil
        return devices
    }

    /// Whether notifications are on at all (`nil` until the user answered) and which pushes the user wants.
    public func notificationPreferences() async throws(FitBaseError) -> (enabled: Bool?, preferences: NotificationPreferences) {
        let user = try await call { try await self.api.getMe().ok.body.json }
        return (user.notificationsEnabled, NotificationPreferences(wire: user.notificationPreferences))
    }

    /// Saves the push preferences (all of them; quiet hours removed when `nil`), and `enabled` when given; returns
    /// them as the server stored them. Fails with `.problem` `validationFailed` naming a quiet-hours field that is not
    /// `HH:mm`.
    @discardableResult
    public func updateNotificationPreferences(_ preferences: NotificationPreferences, enabled: Bool? = nil) async throws(FitBaseError) -> NotificationPreferences {
        let user = try await call {
            try await self.api.updateMe(body: .json(.init(notificationsEnabled: enabled, notificationPreferences: preferences.wire))).ok.body.json
        }
        return NotificationPreferences(wire: user.notificationPreferences)
    }

    /// `Locale.current` as a BCP 47 tag (`pt-PT`).
    public static var processLocale: String? {
        let tag = Locale.current.identifier.replacingOccurrences(of: "_", with: "-").split(separator: "@").first.map(String.init)
        return tag?.isEmpty == false ? tag : nil
    }

    /// `CFBundleShortVersionString (CFBundleVersion)` of the main bundle, when it has them.
    public static var processAppVersion: String? {
        let info = Bundle.main.infoDictionary
        guard let short = info?["CFBundleShortVersionString"] as? String else { return nil }
        return (info?["CFBundleVersion"] as? String).map { "\(short) (\($0))" } ?? short
    }
}

extension NotificationPreferences {
    /// The preferences a `User` answer holds; the defaults for what it leaves out (an account that never chose).
    package init(wire: Components.Schemas.NotificationPreferences?) {
        let defaults = NotificationPreferences()
        self.init(
            newMember: wire?.newMember ?? defaults.newMember, rankChange: wire?.rankChange ?? defaults.rankChange,
            weekEnded: wire?.weekEnded ?? defaults.weekEnded, workoutReminder: wire?.workoutReminder ?? defaults.workoutReminder,
            periodReminder: wire?.periodReminder ?? defaults.periodReminder,
            showSensitiveContent: wire?.showSensitiveContent ?? defaults.showSensitiveContent,
            quietHoursStart: wire?.quietHoursStart, quietHoursEnd: wire?.quietHoursEnd
        )
    }

    /// The preferences as ``updateMe`` takes them: all of them, quiet hours removed when `nil` (an empty text).
    package var wire: Components.Schemas.NotificationPreferences {
        Components.Schemas.NotificationPreferences(
            newMember: newMember, rankChange: rankChange, weekEnded: weekEnded, workoutReminder: workoutReminder,
            periodReminder: periodReminder, showSensitiveContent: showSensitiveContent, quietHoursStart: quietHoursStart ?? "",
            quietHoursEnd: quietHoursEnd ?? ""
        )
    }
}

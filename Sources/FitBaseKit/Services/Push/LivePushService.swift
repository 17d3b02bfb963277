import FitBaseClient
import FitBaseCore
import Foundation

/// ``PushService`` over ``FitBaseClient``'s device registration (``registerDevice`` and ``deleteDevice``), the token
/// kept in the data directory (`push-registration.json`), apart from the store that signing out erases.
///
/// The server ties a device to the session that registered it, so the token is registered again for every new session:
/// the ``LiveAuthService`` tells this service when one starts and, before it ends the session, when one is about to end.
public actor LivePushService: PushService {
    /// What the file keeps: the device's token, and which token the server has for which account (an older one while
    /// a change has not reached the server).
    struct Record: Codable, Equatable {
        var token: Data
        var environment: String
        var registeredToken: Data?
        var userID: UserID?
    }

    private let client: FitBaseClient
    private let bundleID: String?
    private let timeZone: @Sendable () -> TimeZone
    private let kept: DeviceFile<Record>
    /// The system's prompt and remote registration; `nil` where there is none (the permission is then never granted).
    private let notificationPermission: (any NotificationPermissionProvider)?

    init(
        client: FitBaseClient, bundleID: String?, timeZone: @escaping @Sendable () -> TimeZone, file: URL?,
        notificationPermission: (any NotificationPermissionProvider)? = nil
    ) {
        self.client = client
        self.bundleID = bundleID
        self.timeZone = timeZone
        kept = DeviceFile(file)
        self.notificationPermission = notificationPermission
    }

    public func requestPermissionAndRegister() async throws(KitError) -> Bool {
        guard let notificationPermission else { return false }
        return try await notificationPermission.requestPermissionAndRegister()
    }

    public func registerDevice(token: Data, environment: PushEnvironment) async throws(KitError) {
        // Kept first: if the server cannot be reached, the next launch or session registers it.
        var record = kept.load() ?? Record(token: token, environment: environment.rawValue)
        (record.token, record.environment) = (token, environment.rawValue)
        kept.save(record)
        guard let user = await client.currentUserID() else { return }
        if let old = record.registeredToken, old != token, record.userID == user {
            // The old token no longer reaches this device (a restore onto a new phone, a reinstall): stop its pushes.
            if (try? await client.unregisterDevice(token: old)) != nil {
                (record.registeredToken, record.userID) = (nil, nil)
                kept.save(record)
            }
        }
        try await register(record, environment, for: user)
    }

    public func registration() -> PushRegistration? {
        guard let record = kept.load(), let environment = PushEnvironment(rawValue: record.environment) else { return nil }
        return PushRegistration(token: record.token, environment: environment, userID: record.registeredToken == record.token ? record.userID : nil)
    }

    /// A session started (sign-in, sign-up, another account): the kept token is registered for it. When the server
    /// cannot be reached, the next launch's ``registerDevice(token:environment:)`` does it.
    func sessionStarted() async {
        guard let record = kept.load(), let environment = PushEnvironment(rawValue: record.environment), let user = await client.currentUserID() else { return }
        try? await register(record, environment, for: user)
    }

    /// The session is about to end (signing out), while it still works: the device stops receiving the user's pushes.
    /// The token stays for the next sign-in.
    func sessionEnding() async {
        guard var record = kept.load() else { return }
        if let registered = record.registeredToken, let user = record.userID, user == (await client.currentUserID()) {
            try? await client.unregisterDevice(token: registered)
        }
        (record.registeredToken, record.userID) = (nil, nil)
        kept.save(record)
    }

    /// The account was deleted, its devices with it: the token stays for the next sign-in.
    func accountDeleted() {
        guard var record = kept.load() else { return }
        (record.registeredToken, record.userID) = (nil, nil)
        kept.save(record)
    }

    private func register(_ record: Record, _ environment: PushEnvironment, for user: UserID) async throws(KitError) {
        do {
            try await client.registerDevice(token: record.token, environment: environment, bundleId: bundleID, timeZone: timeZone().identifier)
        } catch {
            throw Task.isCancelled ? .cancelled : KitError(error)
        }
        var registered = record
        (registered.registeredToken, registered.userID) = (record.token, user)
        kept.save(registered)
    }
}

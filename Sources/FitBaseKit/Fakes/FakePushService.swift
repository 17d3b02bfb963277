import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``PushService`` over ``FakeAuthService``'s session, as the live one behaves: the token handed over is
/// kept and registered for whoever is signed in (every new session registers it again); signing out or deleting the
/// account removes it, while a session the server ended leaves the device believing it is still that account's. The
/// permission is asked of the provider given, as the live service asks the system's; without one it is never granted.
public actor FakePushService: PushService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case registerDevice, registration, requestPermissionAndRegister
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakePushService")
    private let auth: FakeAuthService
    private let clock: any KitClock
    private let notificationPermission: (any NotificationPermissionProvider)?
    private var kept: (token: Data, environment: PushEnvironment)?

    /// A fake with no token yet, over `auth`'s session, asking `notificationPermission` for the permission.
    public init(
        auth: FakeAuthService, clock: any KitClock = SystemKitClock(), notificationPermission: (any NotificationPermissionProvider)? = nil
    ) {
        self.auth = auth
        self.clock = clock
        self.notificationPermission = notificationPermission
    }

    public func requestPermissionAndRegister() async throws(KitError) -> Bool {
        try await knobs.enter(.requestPermissionAndRegister, clock: clock)
        guard let notificationPermission else { return false }
        return try await notificationPermission.requestPermissionAndRegister()
    }

    public func registerDevice(token: Data, environment: PushEnvironment) async throws(KitError) {
        // Kept even when the registration fails, as the live service keeps it for the next session.
        kept = (token, environment)
        try await knobs.enter(.registerDevice, clock: clock)
    }

    public func registration() async -> PushRegistration? {
        knobs.record(.registration)
        guard let kept else { return nil }
        var user: UserID?
        switch await auth.currentState() {
        case .signedIn(let id): user = id
        case .signedOut(.sessionEnded): user = await auth.lastUserID
        case .signedOut: user = nil
        }
        return PushRegistration(token: kept.token, environment: kept.environment, userID: user)
    }
}

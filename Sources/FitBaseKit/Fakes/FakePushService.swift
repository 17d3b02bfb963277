import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``PushService`` over ``FakeAuthService``'s session, as the live one behaves: the token handed over is
/// kept and registered for whoever is signed in (every new session registers it again); signing out or deleting the
/// account removes it, while a session the server ended leaves the device believing it is still that account's.
public actor FakePushService: PushService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case registerDevice, registration
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakePushService")
    private let auth: FakeAuthService
    private let clock: any KitClock
    private var kept: (token: Data, environment: PushEnvironment)?

    /// A fake with no token yet, over `auth`'s session.
    public init(auth: FakeAuthService, clock: any KitClock = SystemKitClock()) {
        self.auth = auth
        self.clock = clock
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

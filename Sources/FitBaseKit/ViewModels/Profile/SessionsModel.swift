import FitBaseCore
import Foundation
import Observation

/// The signed-in devices (seed 000's security screen): each session with its device and when it was last used, and
/// signing one out. Signing out this device's own session is signing out.
@MainActor @Observable
public final class SessionsModel {
    /// The sessions, this device's first, then the most recently used.
    public private(set) var sessions: [SignedInSession] = []
    /// The session whose sign-out waits for confirmation.
    public private(set) var pendingSignOut: SignedInSession?
    public private(set) var isLoading = false
    public private(set) var isWorking = false
    public private(set) var error: ScreenError?

    private let profiles: any ProfileService
    private let auth: any AuthService
    private let analytics: any AnalyticsService

    /// A model over the services of `dependencies`.
    public init(dependencies: FitBaseDependencies) {
        profiles = dependencies.profile
        auth = dependencies.auth
        analytics = dependencies.analytics
    }

    /// The other devices signed in.
    public var otherSessions: [SignedInSession] { sessions.filter { !$0.isCurrent } }

    /// Loads the sessions.
    public func load() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            sessions = try await profiles.sessions().sorted { ($0.isCurrent ? 1 : 0, $0.lastUsedAt) > ($1.isCurrent ? 1 : 0, $1.lastUsedAt) }
            error = nil
        } catch {
            present(error)
        }
    }

    /// Asks to sign `session`'s device out (the screen shows a confirmation).
    public func requestSignOut(of session: SignedInSession) {
        pendingSignOut = session
    }

    /// Keeps the device signed in.
    public func cancelSignOut() {
        pendingSignOut = nil
    }

    /// Signs out the device asked for: another device's session ends on the server; this device's is a sign-out.
    public func confirmSignOut() async {
        guard let session = pendingSignOut else { return }
        pendingSignOut = nil
        isWorking = true
        defer { isWorking = false }
        if session.isCurrent {
            await auth.signOut()
            analytics.track(.signedOut)
            sessions = []
            return
        }
        do throws(KitError) {
            try await profiles.endSession(id: session.id)
            sessions.removeAll { $0.id == session.id }
            error = nil
        } catch where error.kind == .notFound {
            // Already signed out (it expired, or another device ended it): the list is what matters.
            sessions.removeAll { $0.id == session.id }
        } catch {
            present(error)
        }
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
        analytics.track(.operationFailed(feature: .auth, reason: failure.kind))
    }
}

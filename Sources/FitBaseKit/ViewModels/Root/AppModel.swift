import FitBaseCore
import Foundation
import Observation

/// The app's root: which part of the app shows for the session (sign-in, onboarding, the app), and the links the
/// app is opened with — an invite opens the group join preview (after sign-in, when signed out), a verification
/// link verifies the address, a reset link opens the new-password form.
@MainActor @Observable
public final class AppModel {
    /// The part of the app showing.
    public enum Route: Sendable, Equatable {
        /// The session is not known yet (the launch screen).
        case launching
        /// Nobody is signed in.
        case signIn
        /// Signed in with onboarding unfinished.
        case onboarding
        /// Signed in and onboarded.
        case main
    }

    /// A screen a link asked for, over the route.
    public enum Destination: Sendable, Equatable {
        /// The join preview of this invite code (``groups`` holds the preview).
        case joinGroup(code: String)
        /// The new-password form (``auth`` holds the token).
        case resetPassword
        /// The verification result (``auth`` holds it).
        case emailVerified
    }

    public private(set) var route: Route = .launching
    /// The screen a link asked for; `nil` once dismissed.
    public private(set) var destination: Destination?
    /// An invite opened while signed out, joined after sign-in.
    public private(set) var pendingInviteCode: String?
    /// The sign-in screens' model.
    public let auth: AuthModel
    /// The groups model the join preview uses.
    public let groups: GroupsModel

    private let dependencies: FitBaseDependencies
    @ObservationIgnored private var observation: Task<Void, Never>?

    /// The root over `dependencies`.
    public init(dependencies: FitBaseDependencies) {
        self.dependencies = dependencies
        auth = AuthModel(dependencies: dependencies)
        groups = GroupsModel(dependencies: dependencies)
    }

    /// Reads the session and follows it, routing at each change, until ``stop()``.
    public func start() async {
        await auth.start()
        await reroute(for: await dependencies.auth.currentState())
        observation?.cancel()
        let updates = await dependencies.auth.stateUpdates()
        observation = Task { [weak self] in
            for await state in updates {
                guard let self, !Task.isCancelled else { return }
                await self.reroute(for: state)
            }
        }
    }

    /// Stops following the session.
    public func stop() {
        observation?.cancel()
        observation = nil
        auth.stop()
    }

    /// The app came to the foreground (SwiftUI's `scenePhase` turned `.active`): the entitlement is revalidated, so a
    /// purchase, renewal or refund made while the app was away shows at once.
    public func becameActive() async {
        guard auth.isSignedIn else { return }
        await dependencies.billing.refreshEntitlement()
    }

    /// Onboarding finished: show the app.
    public func onboardingFinished() async {
        guard auth.isSignedIn else { return }
        route = .main
        await openPendingInvite()
    }

    private func reroute(for state: AuthState) async {
        guard state.userID != nil else {
            route = .signIn
            if destination != .resetPassword && destination != .emailVerified { destination = nil }
            return
        }
        guard route == .launching || route == .signIn else { return }
        do throws(KitError) {
            route = try await dependencies.profile.profile().onboardingCompleted ? .main : .onboarding
        } catch {
            // Unreachable profile (offline): the app works from the device's data; onboarding is asked again later.
            route = .main
        }
        await openPendingInvite()
    }

    private func openPendingInvite() async {
        guard route == .main, let code = pendingInviteCode else { return }
        pendingInviteCode = nil
        destination = .joinGroup(code: code)
        await groups.previewInvite(code: code, source: .link)
    }

    /// Handles a link the app was opened with; `false` when it is not a FitBase link.
    @discardableResult
    public func open(_ url: URL) async -> Bool {
        guard let link = dependencies.deepLinks.parse(url) else {
            dependencies.analytics.track(.deepLinkRejected)
            return false
        }
        dependencies.analytics.track(.deepLinkOpened(link.kind))
        switch link {
        case .invite(let code):
            pendingInviteCode = code
            await openPendingInvite()
        case .verifyEmail(let token):
            destination = .emailVerified
            await auth.verifyEmail(token: token)
        case .resetPassword(let token):
            auth.openResetLink(token: token)
            destination = .resetPassword
        }
        return true
    }

    /// The screen a link asked for was closed.
    public func dismissDestination() {
        destination = nil
    }
}

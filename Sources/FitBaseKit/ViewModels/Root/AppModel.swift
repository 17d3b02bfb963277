import FitBaseClient
import FitBaseCore
import Foundation
import Observation

/// The app's root: which part of the app shows for the session (sign-in, onboarding, the app), the links the app is
/// opened with — an invite opens the group join preview, a verification link verifies the address, a reset link opens
/// the new-password form — and the pushes the user taps, each opening its screen.
///
/// An invite or a push that arrives before the app can show it (signed out, onboarding unfinished) waits, kept on the
/// device across restarts (``pending``), and opens once its account is in the app; another account signing in, or
/// its own signing out (or deletion), drops it.
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

    /// A screen a link or a push asked for, over the route.
    public enum Destination: Sendable, Equatable, Codable {
        /// The join preview of this invite code (``groups`` holds the preview).
        case joinGroup(code: String)
        /// The new-password form (``auth`` holds the token).
        case resetPassword
        /// The verification result (``auth`` holds it).
        case emailVerified
        /// The group's screen, its members (someone joined).
        case group(GroupID)
        /// The group's leaderboards (someone overtook the user; the week's results).
        case leaderboard(GroupID)
        /// Today's workouts (a workout reminder).
        case today
        /// The cycle calendar (the next period is due).
        case cycle
        /// The notification feed.
        case notifications
    }

    public private(set) var route: Route = .launching
    /// The screen a link or a push asked for; `nil` once dismissed.
    public private(set) var destination: Destination?
    /// The screen waiting for sign-in or onboarding (kept across restarts).
    public private(set) var pending: PendingNavigation?
    /// An invite opened while signed out, joined after sign-in.
    public var pendingInviteCode: String? {
        guard case .joinGroup(let code)? = pending?.destination else { return nil }
        return code
    }
    /// The sign-in screens' model.
    public let auth: AuthModel
    /// The groups model the join preview uses.
    public let groups: GroupsModel
    /// Whether the Groups tab shows: remote config's ``ConfigKey/socialBeta`` (seed 004's staged social beta), read from
    /// the device at launch, fetched at launch, at each sign-in and on each return to the foreground.
    public private(set) var showsGroupsTab = ConfigKey.socialBeta.defaultValue

    private let dependencies: FitBaseDependencies
    /// When the root was made (at the app's launch): the start of the `app.launch` trace.
    @ObservationIgnored private let created = ContinuousClock.now
    @ObservationIgnored private var launchReported = false
    @ObservationIgnored private var observation: Task<Void, Never>?
    /// The account signed in at the last state followed, to tell a sign-out from a launch signed out.
    @ObservationIgnored private var signedInUser: UserID?

    /// The root over `dependencies`.
    public init(dependencies: FitBaseDependencies) {
        self.dependencies = dependencies
        auth = AuthModel(dependencies: dependencies)
        groups = GroupsModel(dependencies: dependencies)
    }

    /// Reads the session and what waited from the last launch, fetches the remote config, and follows the session,
    /// routing at each change, until ``stop()``. The first start reports the launch's time (from this model's creation
    /// to the first route) as the trace `app.launch`; then Apple is asked whether the session's Apple ID still signs in
    /// (``AuthService/checkProviderCredentials()``) and, signed in, the device's HealthKit samples are uploaded when the
    /// app has asked for access (``FitBaseDependencies/healthKit``).
    public func start() async {
        pending = dependencies.pendingNavigation.load()
        apply(await dependencies.remoteConfig.current())
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
        if !launchReported {
            launchReported = true
            dependencies.reports.trace("app.launch", milliseconds: ReportedTime.milliseconds(since: created))
        }
        await dependencies.auth.checkProviderCredentials()
        await uploadHealthKitSamples()
    }

    /// Stops following the session.
    public func stop() {
        observation?.cancel()
        observation = nil
        auth.stop()
    }

    /// The app came to the foreground (SwiftUI's `scenePhase` turned `.active`): the remote config is fetched; signed
    /// in, the session's Apple ID is checked (revoked: signed out), the entitlement is revalidated (a purchase, renewal or refund made while the app was away shows at once),
    /// the device syncs (every synced collection: ``PlanService/syncNow()`` runs the device's one sync) and, once the app
    /// asked for HealthKit access, the new health samples are uploaded.
    public func becameActive() async {
        await refreshConfig()
        guard auth.isSignedIn else { return }
        await dependencies.auth.checkProviderCredentials()
        // A revoked Apple ID has just signed out.
        guard await dependencies.auth.currentState().userID != nil else { return }
        await dependencies.billing.refreshEntitlement()
        // Offline, the sync engine tries again when the network is back.
        try? await dependencies.plans.syncNow()
        await uploadHealthKitSamples()
    }

    /// The app went to the background (SwiftUI's `scenePhase` turned `.background`): queued analytics events and
    /// reports are sent while the app may still run.
    public func movedToBackground() async {
        await dependencies.analytics.flush()
        await dependencies.reports.flush()
    }

    /// Uploads the device's new HealthKit samples, signed in, when the app asked for access (HealthKit never says
    /// whether reading was allowed: asked is what can be known).
    private func uploadHealthKitSamples() async {
        guard auth.isSignedIn, dependencies.health.uploadsHealthKit, let source = dependencies.healthKit,
            await source.hasRequestedAuthorization()
        else { return }
        _ = await dependencies.health.uploadHealthKitSamples { _ in }
    }

    /// Fetches the remote config (with its `ETag`) and applies it.
    public func refreshConfig() async {
        apply(await dependencies.remoteConfig.refresh())
    }

    private func apply(_ config: RemoteConfigSnapshot) {
        showsGroupsTab = config[.socialBeta]
    }

    /// Onboarding finished: show the app.
    public func onboardingFinished() async {
        guard auth.isSignedIn else { return }
        route = .main
        await openPending()
    }

    private func reroute(for state: AuthState) async {
        let previousUser = signedInUser
        signedInUser = state.userID
        // Each account has its own values (and a launch its first fetch).
        if previousUser != state.userID || route == .launching { await refreshConfig() }
        guard let user = state.userID else {
            route = .signIn
            if destination != .resetPassword && destination != .emailVerified { destination = nil }
            // The account signed out or was deleted: what waited for it goes (what was opened signed out stays). A session
            // the server ended keeps it for the account's return; another account signing in drops it.
            if previousUser != nil, state == .signedOut(.signedOut) || state == .signedOut(.accountDeleted), pending?.userID != nil {
                keepPending(nil)
            }
            return
        }
        if var waiting = pending {
            if waiting.userID == nil {
                // Opened signed out: it is for the account that signed in.
                waiting.userID = user
                keepPending(waiting)
            } else if waiting.userID != user {
                keepPending(nil)
            }
        }
        guard route == .launching || route == .signIn else { return }
        do throws(KitError) {
            route = try await dependencies.profile.profile().onboardingCompleted ? .main : .onboarding
        } catch {
            // Unreachable profile (offline): the app works from the device's data; onboarding is asked again later.
            route = .main
        }
        await openPending()
    }

    /// Shows what waits, once the app shows.
    private func openPending() async {
        guard route == .main, let waiting = pending else { return }
        keepPending(nil)
        destination = waiting.destination
        if case .joinGroup(let code) = waiting.destination { await groups.previewInvite(code: code, source: .link) }
    }

    private func keepPending(_ new: PendingNavigation?) {
        pending = new
        dependencies.pendingNavigation.save(new)
    }

    /// Handles a link the app was opened with; `false` when it is not a FitBase link or cannot be read. A FitBase link
    /// that cannot be read (no token, a mangled invite code, a path FitBase does not make) is reported as an
    /// `invalidInput` error at `deepLink.<kind>` (``DeepLinkReading/reportLocation``): the link's kind only, never
    /// its token, code, host or query.
    @discardableResult
    public func open(_ url: URL) async -> Bool {
        let reading = dependencies.deepLinks.read(url)
        guard case .link(let link) = reading else {
            dependencies.analytics.track(.deepLinkRejected)
            if let location = reading.reportLocation { dependencies.reports.error(.invalidInput, at: location) }
            return false
        }
        dependencies.analytics.track(.deepLinkOpened(link.kind))
        switch link {
        case .invite(let code):
            keepPending(PendingNavigation(destination: .joinGroup(code: code), userID: await dependencies.auth.currentState().userID))
            await openPending()
        case .verifyEmail(let token):
            destination = .emailVerified
            await auth.verifyEmail(token: token)
        case .resetPassword(let token):
            auth.openResetLink(token: token)
            destination = .resetPassword
        }
        return true
    }

    /// Handles a push the user tapped — call it from `userNotificationCenter(_:didReceive:)` with
    /// `response.notification.request.content.userInfo` — opening its screen (``Destination/init(_:)``), after sign-in
    /// and onboarding when the app cannot show it yet; `false` when it is not a FitBase push.
    ///
    /// Signed out, it waits for the account the device receives pushes for (``PushService/registration()``), and is
    /// dropped when there is none.
    @discardableResult
    public func openNotification(userInfo: [AnyHashable: Any]) async -> Bool {
        guard let notification = FitBaseNotification(userInfo: userInfo) else { return false }
        await open(notification)
        return true
    }

    /// ``openNotification(userInfo:)`` for a push already parsed.
    public func open(_ notification: FitBaseNotification) async {
        var owner = await dependencies.auth.currentState().userID
        if owner == nil { owner = await dependencies.push.registration()?.userID }
        guard let owner else { return }
        keepPending(PendingNavigation(destination: Destination(notification), userID: owner))
        await openPending()
    }

    /// The screen a link asked for was closed.
    public func dismissDestination() {
        destination = nil
    }
}

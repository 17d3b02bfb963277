// A whole user story driven through FitBaseKit's view models (as an app's screens drive them) against a running
// `fitbase serve`:
//
//   fitbase-journey http://127.0.0.1:8080
//
// Two people on two devices: Ana signs up, onboards, logs a period, opens today's workouts and logs one, creates a
// group and shares its link; Bea signs up, opens the link, joins and logs a workout, and Ana's live leaderboard
// moves; Ana meets the paywall, logs a workout offline and sees it sync when the network is back, exports her data
// and deletes her account. Each step prints a line; the first that fails prints why and exits 1.
import FitBaseClient
import FitBaseCore
import FitBaseKit
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// The device's network, switched off for the offline step (requests fail as without a connection).
final class DeviceNetwork: ClientTransport, Sendable {
    struct Offline: Error {}

    private let base = FitBaseClient.defaultTransport()
    private let isOffline = Mutex(false)
    let reachability = ManualReachability(reachable: true)

    func setOnline(_ online: Bool) {
        isOffline.withLock { $0 = !online }
        reachability.setReachable(online)
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        if isOffline.withLock({ $0 }) { throw Offline() }
        return try await base.send(request, body: body, baseURL: baseURL, operationID: operationID)
    }
}

/// One person's phone: the live container over its own data directory and network.
@MainActor
struct Phone {
    let name: String
    let email: String
    let dependencies: FitBaseDependencies
    let network: DeviceNetwork
    let directory: URL
    let app: AppModel
    /// What the phone's analytics sink received (events pass only with the user's `analytics` consent).
    let analytics: RecordingAnalytics

    init(name: String, server: URL) throws {
        self.name = name
        email = "journey-\(name.lowercased())-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        network = DeviceNetwork()
        let analytics = RecordingAnalytics()
        self.analytics = analytics
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-journey-\(UUID().uuidString)")
        dependencies = try FitBaseDependencies.live(.init(
            serverURL: server, dataDirectory: directory, analytics: analytics, reachability: network.reachability,
            timeZone: { .gmt }, transport: network, bundleID: Journey.bundleID
        ))
        app = AppModel(dependencies: dependencies)
    }
}

struct JourneyFailure: Error, CustomStringConvertible {
    let description: String
}

@main
@MainActor
struct Journey {
    static let password = "correct horse battery staple"
    static var started = ContinuousClock.now

    static func main() async {
        guard CommandLine.arguments.count == 2, let server = URL(string: CommandLine.arguments[1]) else {
            FileHandle.standardError.write(Data("usage: fitbase-journey SERVER_URL\n".utf8))
            exit(64)
        }
        started = .now
        do {
            try await run(server: server)
            print("journey: every step passed in \(elapsed())")
        } catch {
            print("journey FAILED: \(error)")
            exit(1)
        }
    }

    static func run(server: URL) async throws {
        let ana = try Phone(name: "Ana", server: server)
        let bea = try Phone(name: "Bea", server: server)
        defer {
            for phone in [ana, bea] { try? FileManager.default.removeItem(at: phone.directory) }
        }

        // Sign up, then onboarding.
        await ana.app.start()
        try check(ana.app.route == .signIn, "a new install shows sign-in (route \(ana.app.route))")
        let auth = ana.app.auth
        auth.email = ana.email
        auth.password = password
        auth.displayName = "Ana"
        await auth.signUp()
        try await until("Ana is signed in and sent to onboarding") { auth.isSignedIn && ana.app.route == .onboarding }

        try await onboard(ana, tracksCycle: true)
        step("Ana signed up and onboarded")

        // A period, on the cycle calendar.
        let cycle = CycleModel(dependencies: ana.dependencies, timeZone: .gmt)
        await cycle.load()
        cycle.startLogging(on: CalendarDay(Date().addingTimeInterval(-3 * 86_400), in: .gmt))
        cycle.draft?.flow = .medium
        await cycle.savePeriod()
        try check(cycle.error == nil && cycle.periods.count == 1, "the period is logged (\(String(describing: cycle.error)))")
        try check(cycle.current != nil, "the phase card shows the current cycle")
        step("Ana logged a period; cycle day \(cycle.current.map { "\($0.cycleDay)" } ?? "?")")

        // Today's workouts, and one done.
        let today = TodayModel(dependencies: ana.dependencies)
        await today.load()
        let suggested = try require(today.recommendations?.workouts.first, "today's workouts load (\(String(describing: today.error)))")
        try await complete(suggested.workout.id, on: ana)
        step("Ana saw \(today.recommendations?.workouts.count ?? 0) suggestions and logged \(suggested.workout.title)")

        // A group and its link.
        let groups = GroupsModel(dependencies: ana.dependencies)
        await groups.load()
        try check(groups.isEmpty, "Ana starts without a group")
        groups.newGroupName = "Morning crew & friends"
        await groups.create(timeZone: .gmt)
        let group = try require(groups.group, "the group is created (\(String(describing: groups.error)))")
        await groups.createInvitation()
        let invitation = try require(groups.invitation, "an invitation is made (\(String(describing: groups.error)))")
        groups.didShareInvitation()
        step("Ana created \(group.name) and shares \(invitation.url.absoluteString)")
        try await invitePageLoads(invitation, groupName: group.name)

        // Ana watches the leaderboard live while Bea joins through the link and logs a workout.
        let leaderboard = LeaderboardModel(groupID: group.id, dependencies: ana.dependencies)
        leaderboard.appear()
        try await until("Ana's leaderboard loads") { leaderboard.board != nil }

        // Bea taps the link before she has an account: the app keeps it through sign-up and onboarding.
        await bea.app.start()
        try check(await bea.app.open(invitation.url), "Bea's app takes the invite link")
        bea.app.auth.email = bea.email
        bea.app.auth.password = password
        bea.app.auth.displayName = "Bea"
        await bea.app.auth.signUp()
        try await until("Bea is signed in and sent to onboarding") { bea.app.auth.isSignedIn && bea.app.route == .onboarding }
        try await onboard(bea, tracksCycle: false)
        try await until("Bea sees the join preview") { bea.app.groups.preview != nil && bea.app.destination == .joinGroup(code: invitation.code) }
        await bea.app.groups.acceptInvite()
        try await until("Bea is in the group") { bea.app.groups.group?.id == group.id }
        try await complete(suggested.workout.id, on: bea)
        try await until("Ana's live leaderboard shows Bea's workout", timeout: .seconds(30)) {
            leaderboard.rows.contains { $0.displayName == "Bea" && $0.value == 1 }
        }
        leaderboard.disappear()
        step("Bea joined by link and logged; Ana's leaderboard moved live (\(leaderboard.rows.map { "\($0.displayName) \($0.value)" }))")
        try await pushReachesTheGateway(ana, group: group, server: server)

        let notifications = NotificationsModel(dependencies: ana.dependencies)
        await notifications.load()
        try check(notifications.notifications.contains { $0.kind == .newMember } && notifications.badge != nil, "Ana is told Bea joined")
        step("Ana's notifications: \(notifications.unreadCount) unread")

        // The plan rule is the server's (Core's): every account keeps one plan; a second one is Pro's custom plans.
        let plans = PlansModel(dependencies: ana.dependencies)
        await plans.appear()
        await plans.create()
        try check(plans.paywall == nil && plans.draft != nil, "a free account makes its first plan")
        plans.draft?.name = "Ana's first block"
        await plans.save()
        try check(plans.error == nil && plans.plans.count == 1, "the first plan is kept (\(String(describing: plans.error)))")
        await plans.create()
        let prompt = try require(plans.paywall, "a free account meets the paywall for a second plan")
        plans.disappear()
        let paywall = PaywallModel(dependencies: ana.dependencies, prompt: prompt)
        await paywall.appear()
        try check(paywall.error == nil && paywall.currentTier == .free && !paywall.isUnlocked, "the paywall shows the free tier (\(String(describing: paywall.error)))")
        try check(await paywall.requiresUpgrade(.customPlans) == .pro, "custom plans need Pro")
        step("Ana kept her first plan and met the paywall for a second: \(prompt.requiredTier.rawValue) unlocks custom plans; \(paywall.offers.count) tiers on offer")

        // Offline: a workout logged without a network waits, then syncs when the network is back.
        ana.network.setOnline(false)
        let history = HistoryModel(dependencies: ana.dependencies)
        try await complete(suggested.workout.id, on: ana)
        await history.load()
        try check(history.logs.count == 2 && history.logs.contains { $0.isPendingSync }, "the offline log shows, waiting to sync")
        // The week's leaderboards cannot load offline: the Kit reports the error (a code and where, nothing else).
        let offlineBoards = await (try? ana.dependencies.groups.leaderboards(groupID: group.id, week: nil)) == nil
        try check(offlineBoards, "the leaderboards do not load offline")
        ana.network.setOnline(true)
        try await until("the offline log syncs once the network is back", timeout: .seconds(30)) {
            await history.load()
            return history.logs.count == 2 && !history.logs.contains { $0.isPendingSync }
        }
        step("Ana logged a workout offline; it synced when the network came back (\(history.stats?.totalWorkouts ?? 0) workouts)")
        try await reportsAreSent(ana)

        // Export, then deletion with the password.
        let profile = ProfileModel(dependencies: ana.dependencies, exportDirectory: ana.directory)
        await profile.load()
        await profile.export()
        let exported = try require(profile.exportFileURL, "the export is made (\(String(describing: profile.error)))")
        let exportedBytes = try Data(contentsOf: exported)
        let export = try JSONSerialization.jsonObject(with: exportedBytes) as? [String: Any]
        let sections = export?["sections"] as? [String: Any] ?? [:]
        try check((sections["workoutHistory"] as? [Any])?.count == 2 && (sections["cyclePeriods"] as? [Any])?.count == 1, "the export holds both workout logs and the period (sections \(sections.keys.sorted()))")
        profile.requestAccountDeletion()
        await profile.deleteAccount(.password(password))
        try check(profile.isAccountDeleted, "the account is deleted (\(String(describing: profile.error)))")
        try await until("Ana's app returns to sign-in") { ana.app.route == .signIn }
        await history.load()
        await cycle.load()
        try check(history.logs.isEmpty && cycle.periods.isEmpty, "nothing of Ana's stays on the device")
        step("Ana exported \(exportedBytes.count) bytes and deleted her account")

        try await healthKit(server: server)
        try await purchaseSeenOnAFreshInstall(bea, server: server)
        try await checkAnalytics([ana, bea])
        try await socialBetaRollout(server: server)

        ana.app.stop()
        bea.app.stop()
    }

    /// Goes through onboarding's four steps on `phone` and lands in the app.
    static func onboard(_ phone: Phone, tracksCycle: Bool) async throws {
        let onboarding = OnboardingModel(dependencies: phone.dependencies, timeZone: .gmt)
        await onboarding.load()
        onboarding.profile.displayName = phone.name
        onboarding.profile.fitnessLevel = .intermediate
        await onboarding.next()
        onboarding.profile.cycleTrackingEnabled = tracksCycle
        if tracksCycle { onboarding.lastPeriodStart = CalendarDay(Date().addingTimeInterval(-10 * 86_400), in: .gmt) }
        await onboarding.next()
        onboarding.profile.goals = [.buildStrength]
        onboarding.profile.preferredWorkoutTypes = [.strength, .pilates]
        await onboarding.next()
        onboarding.profile.notificationsEnabled = true
        (onboarding.acceptsTerms, onboarding.acceptsPrivacy, onboarding.acceptsHealthData, onboarding.acceptsAnalytics) = (true, true, tracksCycle, true)
        await onboarding.next()
        try check(onboarding.isCompleted, "\(phone.name)'s onboarding finishes (\(onboarding.fieldErrors), \(String(describing: onboarding.error)))")
        await phone.app.onboardingFinished()
        try await until("\(phone.name) reaches the app") { phone.app.route == .main }
    }

    /// Opens `workoutID`'s detail on `phone`, starts and completes it.
    static func complete(_ workoutID: WorkoutID, on phone: Phone) async throws {
        let detail = WorkoutDetailModel(workoutID: workoutID, dependencies: phone.dependencies)
        await detail.load()
        detail.start()
        detail.rating = 4
        detail.energyBefore = 3
        detail.energyAfter = 4
        await detail.complete()
        guard case .completed = detail.session else {
            throw JourneyFailure(description: "\(phone.name) could not log the workout: \(String(describing: detail.error)) \(detail.fieldErrors)")
        }
    }

    static func step(_ text: String) {
        print("✓ \(text) [\(elapsed())]")
    }

    static func elapsed() -> String {
        let duration = started.duration(to: .now)
        return String(format: "%.1f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    static func check(_ condition: Bool, _ what: String) throws {
        guard condition else { throw JourneyFailure(description: what) }
    }

    static func require<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw JourneyFailure(description: what) }
        return value
    }

    /// Waits up to `timeout` for `condition`, checking every 50 ms.
    static func until(_ what: String, timeout: Duration = .seconds(15), _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        if await condition() { return }
        throw JourneyFailure(description: "timed out: \(what)")
    }
}

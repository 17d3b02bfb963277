import FitBaseClient
import FitBaseCore
import Foundation

/// Every fake, wired to each other as the real services are (a purchase unlocks premium videos and recommendations,
/// a period moves recommendations, deleting the account signs out), over one clock.
///
/// ```swift
/// let fakes = FakeServices(scenario: .strict, clock: TestKitClock())
/// fakes.catalog.knobs.implement(.workouts)
/// fakes.catalog.knobs.fail(.workouts, with: .offline)
/// let model = LibraryModel(dependencies: .fake(fakes))
/// ```
public struct FakeServices: Sendable {
    public let auth: FakeAuthService
    public let profile: FakeProfileService
    public let cycle: FakeCycleService
    public let catalog: FakeCatalogService
    public let recommendations: FakeRecommendationService
    public let history: FakeHistoryService
    public let plans: FakePlanService
    public let billing: FakeBillingService
    public let groups: FakeGroupService
    public let notifications: FakeNotificationService
    public let health: FakeHealthService
    public let push: FakePushService
    public let media: FakeMediaService
    /// Where ``AppModel`` keeps a pending screen: memory only, shared by every model over these fakes (a "restart"
    /// is a new model over the same fakes).
    public let pendingNavigation = PendingNavigationStore.inMemory()
    public let analytics: RecordingAnalytics
    /// Remote config: every flag at its in-app default until a test serves values. Not among ``allKnobs``: the root
    /// model reads it at every launch, so a strict test that does not care still answers with the defaults.
    public let remoteConfig: FakeRemoteConfigService
    /// What the app reported (errors, crashes, traces).
    public let reports = RecordingReporter()
    public let clock: any KitClock
    public let deepLinks: DeepLinkParser

    /// Fakes starting in `scenario`, on `clock`, with days counted in `timeZone`.
    public init(scenario: FakeScenario = .populated, clock: any KitClock = SystemKitClock(), timeZone: TimeZone = .gmt) {
        let now = clock.now
        let today = CalendarDay(now, in: timeZone)
        let populated = scenario == .populated || scenario == .strict
        let deepLinks = DeepLinkParser(appScheme: "fitbase", publicURLs: [URL(string: "https://fitbase.example.com")!])
        self.clock = clock
        self.deepLinks = deepLinks
        auth = FakeAuthService(signedIn: scenario != .signedOut, clock: clock)
        profile = FakeProfileService(auth: auth, profile: populated ? FakeData.profile : Profile(displayName: FakeData.user.displayName), clock: clock)
        cycle = FakeCycleService(periods: populated ? FakeData.periods(today: today) : [], profile: profile, timeZone: timeZone, clock: clock)
        billing = FakeBillingService(clock: clock)
        catalog = FakeCatalogService(billing: billing, clock: clock)
        recommendations = FakeRecommendationService(catalog: catalog, cycle: cycle, billing: billing, profile: profile, timeZone: timeZone, clock: clock)
        history = FakeHistoryService(
            logs: populated ? FakeData.history(now: now) : [], catalog: catalog, billing: billing, timeZone: timeZone, clock: clock)
        plans = FakePlanService(
            plans: populated ? [FakeData.plan(start: WorkoutStreaks.weekStart(of: today))] : [], catalog: catalog, billing: billing, history: history,
            cycle: cycle, profile: profile, timeZone: timeZone, clock: clock)
        let (group, members) = FakeData.group(now: now)
        groups = FakeGroupService(group: populated ? group : nil, members: populated ? members : [], parser: deepLinks, clock: clock)
        notifications = FakeNotificationService(notifications: populated ? FakeData.notifications(now: now, groupID: group.id) : [], clock: clock)
        health = FakeHealthService(samples: populated ? FakeData.healthSamples(now: now) : [], timeZone: timeZone, clock: clock)
        push = FakePushService(auth: auth, clock: clock)
        media = FakeMediaService(auth: auth, catalog: catalog, clock: clock)
        analytics = RecordingAnalytics()
        remoteConfig = FakeRemoteConfigService(clock: clock)
        if scenario == .strict { unimplementAll() }
    }

    /// From now on every fake answers only the operations a test names (`knobs.implement(…)`), whatever data it started
    /// with: what ``FakeScenario/strict`` does to the populated fakes, for the empty or signed-out ones.
    public func unimplementAll() {
        for knobs in allKnobs { knobs.unimplementAll() }
    }

    /// Every fake's knobs, to fail or slow down everything at once.
    public var allKnobs: [any AnyFakeKnobs] {
        [auth.knobs, profile.knobs, cycle.knobs, catalog.knobs, recommendations.knobs, history.knobs, plans.knobs, billing.knobs, groups.knobs,
         notifications.knobs, health.knobs, billing.store.knobs, push.knobs, media.knobs]
    }
}

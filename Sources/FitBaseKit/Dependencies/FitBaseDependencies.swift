import FitBaseClient
import FitBaseCore
import Foundation

/// Every service the app's screens use, built once by the app and handed to view models (seed 002's
/// `ServiceContainer`, without a service locator: a plain value whose members are protocols).
///
/// ```swift
/// // At launch; opening the sealed local store can fail (disk full, an unreadable file): show an error screen then.
/// let dependencies = try FitBaseDependencies.live(.init(serverURL: URL(string: "https://api.example.com")!))
/// let app = AppModel(dependencies: dependencies)
///
/// #Preview { LibraryView(model: WorkoutLibraryModel(dependencies: .preview())) }
/// ```
///
/// * ``preview(_:)``: the fakes with canned data on the system clock — SwiftUI previews, demos, UI tests.
/// * ``test(_:clock:)``: the fakes on a ``TestKitClock`` — unit tests control time and failures through
///   ``FakeServices``' knobs (build the ``FakeServices`` yourself to keep hold of them, then ``fake(_:)``).
/// * `live(_:)`: the services over a ``FitBaseClient`` and the device's local store.
///
/// Replace any member to mix (a live catalog with a fake billing in a demo build, say).
public struct FitBaseDependencies: Sendable {
    public var auth: any AuthService
    public var profile: any ProfileService
    public var cycle: any CycleService
    public var catalog: any CatalogService
    public var recommendations: any RecommendationService
    public var history: any HistoryService
    public var plans: any PlanService
    public var billing: any BillingService
    public var groups: any GroupService
    public var notifications: any NotificationService
    public var health: any HealthService
    public var analytics: any AnalyticsService
    /// The time source for debounces, "updated … ago" labels and timers.
    public var clock: any KitClock
    /// Reads the links the app is opened with.
    public var deepLinks: DeepLinkParser
    /// The device's push token, registered for the signed-in user.
    public var push: any PushService
    /// Where a screen a link or a push asked for waits for sign-in, across restarts.
    public var pendingNavigation: PendingNavigationStore
    /// Profile photos and workout media: uploads with progress, expiring links, cached images.
    public var media: any MediaService
    /// Remote config flags, typed (``ConfigKey``), with in-app defaults.
    public var remoteConfig: any RemoteConfigService
    /// The app's errors, crashes and operation timings (never user data), sent in batches.
    public var reports: any ReportingService
    /// Where the device's health samples are read (HealthKit on Apple platforms), when the app uploads them: a screen
    /// asks for access with ``HealthKitSource/requestAuthorization()``; once asked, ``AppModel`` uploads at launch and
    /// on each return to the foreground.
    public var healthKit: (any HealthKitSource)?

    /// A container of the given services.
    public init(
        auth: any AuthService, profile: any ProfileService, cycle: any CycleService, catalog: any CatalogService,
        recommendations: any RecommendationService, history: any HistoryService, plans: any PlanService, billing: any BillingService,
        groups: any GroupService, notifications: any NotificationService, health: any HealthService, analytics: any AnalyticsService,
        clock: any KitClock, deepLinks: DeepLinkParser, push: any PushService, pendingNavigation: PendingNavigationStore, media: any MediaService,
        remoteConfig: any RemoteConfigService = FakeRemoteConfigService(), reports: any ReportingService = RecordingReporter(),
        healthKit: (any HealthKitSource)? = nil
    ) {
        self.auth = auth
        self.profile = profile
        self.cycle = cycle
        self.catalog = catalog
        self.recommendations = recommendations
        self.history = history
        self.plans = plans
        self.billing = billing
        self.groups = groups
        self.notifications = notifications
        self.health = health
        self.analytics = analytics
        self.clock = clock
        self.deepLinks = deepLinks
        self.push = push
        self.pendingNavigation = pendingNavigation
        self.media = media
        self.remoteConfig = remoteConfig
        self.reports = reports
        self.healthKit = healthKit
    }

    /// The container of `fakes`.
    public static func fake(_ fakes: FakeServices) -> FitBaseDependencies {
        FitBaseDependencies(
            auth: fakes.auth, profile: fakes.profile, cycle: fakes.cycle, catalog: fakes.catalog, recommendations: fakes.recommendations,
            history: fakes.history, plans: fakes.plans, billing: fakes.billing, groups: fakes.groups, notifications: fakes.notifications,
            health: fakes.health, analytics: fakes.analytics, clock: fakes.clock, deepLinks: fakes.deepLinks, push: fakes.push,
            pendingNavigation: fakes.pendingNavigation, media: fakes.media, remoteConfig: fakes.remoteConfig, reports: fakes.reports
        )
    }

    /// Fakes with canned data in `scenario`, on the system clock (previews and demos).
    public static func preview(_ scenario: FakeScenario = .populated) -> FitBaseDependencies {
        fake(FakeServices(scenario: scenario))
    }

    /// Fakes in `scenario` on `clock` (tests).
    public static func test(_ scenario: FakeScenario = .populated, clock: TestKitClock = TestKitClock()) -> FitBaseDependencies {
        fake(FakeServices(scenario: scenario, clock: clock))
    }
}

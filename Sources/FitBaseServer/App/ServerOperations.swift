import FitBaseAPI

/// The generated `APIProtocol`, answered by the features.
///
/// Each feature's operations are a protocol of their own (`PlanOperations`, `SyncOperations`, …) whose extension, in
/// the feature's folder, implements them against the feature; this type only holds the features and conforms to
/// every one of those protocols. An operation added to the contract is written once, in its feature.
///
/// A class: the generated server copies its handler into every request's closures, and copying a struct of the
/// features retained and released each of their references per request (6 % of the CPU of `/healthz`).
final class ServerOperations: APIProtocol,
    ServiceStatusOperations,
    AuthOperations, ProviderSignInOperations, MeOperations, CredentialsOperations, AccountPagesOperations,
    CatalogOperations, CycleOperations, HistoryOperations, PlanOperations, RecommendationOperations,
    SyncOperations, BillingOperations, HealthOperations, GroupOperations, InvitePageOperations, ChallengeOperations, EventStreamOperations,
    DeviceOperations, MediaOperations,
    MetricsOperations, AnalyticsOperations,
    RemoteConfigOperations, ReportsOperations
{
    let statusFeature: ServiceStatusFeature
    let accountsFeature: AccountsFeature
    let catalogFeature: CatalogFeature
    let cycleFeature: CycleFeature
    let historyFeature: HistoryFeature
    let plansFeature: PlansFeature
    let recommendationsFeature: RecommendationsFeature
    let syncFeature: SyncFeature
    let billingFeature: BillingFeature
    let healthFeature: HealthFeature
    let socialFeature: SocialFeature
    let realtimeFeature: RealtimeFeature
    let pushFeature: PushFeature
    let mediaFeature: MediaFeature
    let metricsFeature: MetricsFeature
    let analyticsFeature: AnalyticsFeature
    let remoteConfigFeature: RemoteConfigFeature
    let reportsFeature: ReportsFeature
    let clock: ServerClock
    let ids: IDSource

    init(
        status: ServiceStatusFeature, accounts: AccountsFeature, catalog: CatalogFeature, cycle: CycleFeature, history: HistoryFeature,
        plans: PlansFeature, recommendations: RecommendationsFeature, sync: SyncFeature, billing: BillingFeature, health: HealthFeature,
        social: SocialFeature, realtime: RealtimeFeature, push: PushFeature, media: MediaFeature, metrics: MetricsFeature, analytics: AnalyticsFeature,
        remoteConfig: RemoteConfigFeature, reports: ReportsFeature, clock: ServerClock, ids: IDSource
    ) {
        statusFeature = status
        accountsFeature = accounts
        catalogFeature = catalog
        cycleFeature = cycle
        historyFeature = history
        plansFeature = plans
        recommendationsFeature = recommendations
        syncFeature = sync
        billingFeature = billing
        healthFeature = health
        socialFeature = social
        realtimeFeature = realtime
        pushFeature = push
        mediaFeature = media
        metricsFeature = metrics
        analyticsFeature = analytics
        remoteConfigFeature = remoteConfig
        reportsFeature = reports
        self.clock = clock
        self.ids = ids
    }

    /// The features in the order the application lists their services, data owners and start-up work.
    var features: [any ServerFeature] {
        [
            accountsFeature, catalogFeature, cycleFeature, historyFeature, plansFeature, recommendationsFeature, socialFeature, billingFeature,
            pushFeature, healthFeature, realtimeFeature, syncFeature, statusFeature, mediaFeature, metricsFeature,
            analyticsFeature, remoteConfigFeature, reportsFeature,
        ]
    }

    var metrics: ServerMetrics { metricsFeature.metrics }

    /// The operations answered by a handler of their own before the generated one (see ``DirectRoute``).
    var directRoutes: [DirectRoute] {
        statusRoutes + catalogRoutes + syncRoutes + healthRoutes + eventRoutes + exportRoutes + historyRoutes + mediaRoutes + catalogMediaRoutes
    }
}

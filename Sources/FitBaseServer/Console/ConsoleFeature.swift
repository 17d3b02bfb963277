import FitBaseCore
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// Where the dashboard's product-analytics panel gets its numbers: events counted per name per day since a day.
/// The analytics ingest's store provides it (``AnalyticsStore``); without a source the panel says it is not connected.
protocol ConsoleAnalyticsSource: Sendable {
    /// Counts of each event per UTC day (`YYYY-MM-DD`) from `since` on.
    func dailyEventCounts(since: Date) async throws -> [(event: String, day: String, count: Int)]
}

/// The operator's web console under `/console`: server-rendered pages over the features' own stores and rules, for
/// administrators signed in with their password (``ConsoleSessionStore``), every change recorded in the
/// ``OperatorAuditTrail``.
struct ConsoleFeature: ServerFeature {
    let database: Database
    let configuration: ServerConfiguration
    let renderer: ConsoleRenderer
    let sessions: ConsoleSessionStore
    let accounts: AccountsFeature
    let catalog: CatalogFeature
    let social: SocialFeature
    let outbox: Outbox
    let keystore: Database?
    let vault: HealthVault
    let masterKey: MasterKey
    /// The contract document (`/openapi.yaml`), whose version the System page shows.
    let contractDocument: Data
    let clock: ServerClock
    let ids: IDSource
    let logger: Logger
    /// The product-analytics panel's source; `nil` until the analytics ingest provides one.
    let analytics: (any ConsoleAnalyticsSource)?
    /// Remote config flags (the Config page).
    let remoteConfig: RemoteConfigFeature
    /// The apps' errors, crashes and traces (the Reports page).
    let reports: ReportsFeature

    static func make(_ foundation: ServerFoundation, operations: ServerOperations, analytics: (any ConsoleAnalyticsSource)? = nil) async throws -> ConsoleFeature {
        ConsoleFeature(
            database: foundation.database, configuration: foundation.configuration,
            renderer: try await ConsoleRenderer.load(appName: foundation.composer.appName),
            sessions: ConsoleSessionStore(database: foundation.database), accounts: operations.accountsFeature, catalog: operations.catalogFeature,
            social: operations.socialFeature, outbox: foundation.outbox, keystore: foundation.keystore, vault: foundation.vault,
            masterKey: foundation.masterKey, contractDocument: operations.statusFeature.openAPIDocument, clock: foundation.clock, ids: foundation.ids,
            logger: foundation.logger, analytics: analytics, remoteConfig: operations.remoteConfigFeature,
            reports: operations.reportsFeature
        )
    }

    var masterKeyID: String { masterKey.id }

    /// Ended console sessions forgotten on housekeeping's schedule, a day after they ended.
    var services: [any Service] {
        let (sessions, clock) = (self.sessions, self.clock)
        return [
            PeriodicService.purge("ended console sessions", schedule: configuration.housekeeping, logger: logger) {
                try await sessions.purge(endedBefore: clock.now.addingTimeInterval(-86_400))
            }
        ]
    }

    func addRoutes(to router: Router<FitBaseRequestContext>) {
        router.get("/console/assets/console.css") { _, _ in
            var response = Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: renderer.stylesheet))
            response.headers[.cacheControl] = "max-age=300"
            return response
        }
        router.get("/console/signin") { request, _ in try signInPage(request) }
        router.post("/console/signin") { request, _ in try await signIn(request) }
        router.post("/console/signout", use: action { _, _, admin, _ in try await signOut(admin) })

        router.get("/console", use: page { _, _, admin in try await dashboard(admin) })
        router.get("/console/users", use: page { request, _, admin in try await users(request, admin) })
        router.get("/console/users/:user", use: page { request, context, admin in try await user(request, context, admin) })
        router.post("/console/users/:user/sessions/:session/revoke", use: action { _, context, admin, _ in try await revokeSession(context, admin) })
        router.post("/console/users/:user/tier", use: action { _, context, admin, form in try await grantTier(context, admin, form) })
        router.post("/console/users/:user/delete", use: action { _, context, admin, form in try await deleteUser(context, admin, form) })

        router.get("/console/catalog", use: page { request, _, admin in try await catalogList(request, admin) })
        router.get("/console/catalog/new", use: page { _, _, admin in try workoutForm(nil, admin) })
        router.post("/console/catalog/workouts", use: action { _, _, admin, form in try await saveWorkout(nil, admin, form) })
        router.get("/console/catalog/workouts/:workout", use: page { _, context, admin in try await editWorkout(context, admin) })
        router.post("/console/catalog/workouts/:workout", use: action { _, context, admin, form in try await saveWorkout(context, admin, form) })
        router.post("/console/catalog/workouts/:workout/delete", use: action { _, context, admin, _ in try await deleteWorkout(context, admin) })
        router.get("/console/catalog/import", use: page { _, _, admin in try importForm(admin) })
        router.post("/console/catalog/import", use: action { _, _, admin, form in try await importCatalog(admin, form) })

        router.get("/console/groups", use: page { _, _, admin in try await groups(admin) })
        router.get("/console/groups/:group", use: page { request, context, admin in try await group(request, context, admin) })
        router.post("/console/groups/:group/members/:user/remove", use: action { _, context, admin, _ in try await removeMember(context, admin) })
        router.post("/console/groups/:group/end", use: action { _, context, admin, _ in try await endGroup(context, admin) })

        router.get("/console/deliveries", use: page { request, _, admin in try await deliveries(request, admin) })
        router.post("/console/deliveries/:job/retry", use: action { _, context, admin, _ in try await retryDelivery(context, admin) })

        router.get("/console/config", use: page { request, _, admin in try await remoteConfigPage(request, admin) })
        router.post("/console/config/flags", use: action { _, _, admin, form in try await saveFlag(admin, form) })
        router.post("/console/config/flags/:key/rollout", use: action { _, context, admin, form in try await changeRollout(context, admin, form) })
        router.post("/console/config/flags/:key/delete", use: action { _, context, admin, _ in try await deleteFlag(context, admin) })
        router.post("/console/config/testers", use: action { _, _, admin, form in try await setTester(admin, form) })

        router.get("/console/reports", use: page { request, _, admin in try await reportsPage(request, admin) })

        router.get("/console/system", use: page { _, _, admin in try await system(admin, verdict: nil) })
        router.post("/console/system/audit-verify", use: action { _, _, admin, _ in try await verifyAudit(admin) })
    }
}

import FitBaseClient
import Foundation

/// Keeps the device current while someone is signed in (started at launch when signed in and after each sign-in,
/// stopped at sign-out): the sync engine (periodic sync, reachability) and the entitlement (refreshed at each start).
/// One event stream serves both — the server's `sync` events wake the engine, its `subscription` events refresh the
/// entitlement — so a device holds one of the account's few streams, not one per concern.
actor SyncRunner {
    let engine: SyncEngine
    let client: FitBaseClient
    let billing: LiveBillingService
    let reachability: (any ReachabilityMonitor)?
    private var running = false
    private var events: Task<Void, Never>?

    init(engine: SyncEngine, client: FitBaseClient, billing: LiveBillingService, reachability: (any ReachabilityMonitor)?) {
        self.engine = engine
        self.client = client
        self.billing = billing
        self.reachability = reachability
    }

    /// Starts again from scratch (a new session: the old event stream ended with the old one). Returns once the
    /// entitlement is refreshed, so the app opens on the user's tier, not on the previous user's or on none.
    func restart() async {
        if running { await halt() }
        running = true
        await engine.start()
        await engine.follow(serverEvents: false, reachability: reachability)
        let stream = client.events()
        events = Task { [engine, billing] in
            do {
                for try await event in stream {
                    switch event.kind {
                    case .sync: await engine.requestSync()
                    case .subscription: await billing.refreshEntitlement()
                    default: continue
                    }
                }
            } catch {
                // The stream ended for good (signed out, refused): periodic sync carries on, the foreground refreshes.
            }
        }
        await billing.refreshEntitlement()
    }

    func stop() async {
        running = false
        await halt()
    }

    private func halt() async {
        events?.cancel()
        events = nil
        await engine.stop()
    }
}

import FitBaseClient
import Foundation

/// Keeps the device current while someone is signed in (started at launch when signed in and after each sign-in,
/// stopped at sign-out): the sync engine (periodic sync, reachability) and the entitlement (refreshed at each start).
/// One event stream serves every concern — the server's `sync` events wake the engine, its `subscription` events
/// refresh the entitlement, its `notification` events reach ``notificationArrivals()`` — so a device holds one of the
/// account's few streams, not one per concern.
actor SyncRunner {
    let engine: SyncEngine
    let client: FitBaseClient
    let billing: LiveBillingService
    let reachability: (any ReachabilityMonitor)?
    private var running = false
    private var events: Task<Void, Never>?
    private var arrivalObservers: [UUID: AsyncStream<NotificationID>.Continuation] = [:]

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
        events = Task { [engine, billing, weak self] in
            do {
                for try await event in stream {
                    switch event.kind {
                    case .sync: await engine.requestSync()
                    case .subscription: await billing.refreshEntitlement()
                    case .notification(let id, _, _): await self?.announce(id)
                    default: continue
                    }
                }
            } catch {
                // The stream ended for good (signed out, refused): periodic sync carries on, the foreground refreshes.
            }
        }
        await billing.refreshEntitlement()
    }

    /// Each new notification's id as the device's event stream brings it, while someone is signed in, until the
    /// stream returned is dropped.
    nonisolated func notificationArrivals() -> AsyncStream<NotificationID> {
        let (stream, continuation) = AsyncStream<NotificationID>.makeStream(bufferingPolicy: .bufferingNewest(32))
        let id = UUID()
        Task { await self.observeArrivals(id, continuation) }
        continuation.onTermination = { _ in Task { await self.stopObservingArrivals(id) } }
        return stream
    }

    private func observeArrivals(_ id: UUID, _ continuation: AsyncStream<NotificationID>.Continuation) {
        arrivalObservers[id] = continuation
    }

    private func stopObservingArrivals(_ id: UUID) {
        arrivalObservers[id] = nil
    }

    private func announce(_ notification: NotificationID) {
        for observer in arrivalObservers.values { observer.yield(notification) }
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

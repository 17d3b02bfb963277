import FitBaseClient
import Foundation

/// Runs the sync engine while someone is signed in: periodic sync, the server's `sync` events and reachability
/// (started at launch when signed in and after each sign-in, stopped at sign-out).
actor SyncRunner {
    let engine: SyncEngine
    let reachability: (any ReachabilityMonitor)?
    private var running = false

    init(engine: SyncEngine, reachability: (any ReachabilityMonitor)?) {
        self.engine = engine
        self.reachability = reachability
    }

    /// Starts syncing again from scratch (a new session: the old event stream ended with the old one).
    func restart() async {
        if running { await engine.stop() }
        running = true
        await engine.start()
        await engine.follow(serverEvents: true, reachability: reachability)
    }

    func stop() async {
        running = false
        await engine.stop()
    }
}

import Hummingbird
import ServiceLifecycle

/// One feature of the server (plans, cycle, social, …): it builds its stores and services from the
/// ``ServerFoundation`` and the features it depends on, and hands the application what it adds to it.
///
/// A feature's API operations are a protocol of its own (`PlanOperations`, …) whose extension implements them against
/// the feature; ``ServerOperations`` conforms to all of them, which is how the generated `APIProtocol` is answered (and
/// where their direct routes are gathered). Everything else a feature adds is listed here, each with an empty default.
protocol ServerFeature: Sendable {
    /// The user rows this feature keeps, so export and deletion cover them (see ``AccountDataRegistry``).
    var dataOwners: [any AccountDataOwner] { get }
    /// The feature's collections the sync protocol reads and writes (see ``SyncedCollections``).
    var syncedCollections: [any SyncedCollection] { get }
    /// Background services, started in order with the server and stopped in reverse order.
    var services: [any Service] { get }
    /// Middleware that wraps only some of the feature's routes.
    var middleware: [ScopedMiddleware] { get }
    /// Work done once before the server accepts connections, after the migrations.
    func start() async throws
    /// Routes outside the contract (the console's HTML pages), added to the router after the contract's.
    func addRoutes(to router: Router<FitBaseRequestContext>)
}

extension ServerFeature {
    var dataOwners: [any AccountDataOwner] { [] }
    var syncedCollections: [any SyncedCollection] { [] }
    var services: [any Service] { [] }
    var middleware: [ScopedMiddleware] { [] }
    func start() async throws {}
    func addRoutes(to router: Router<FitBaseRequestContext>) {}
}

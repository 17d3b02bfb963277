import Logging
import ServiceLifecycle

/// The event stream (`GET /v1/events`): events committed by any instance, heard through the database and handed to
/// each open stream its caller may see.
struct RealtimeFeature: ServerFeature {
    let database: Database
    let hub: EventHub
    private let logger: Logger
    private let sessionCheck: Duration
    private let clock: ServerClock

    init(_ foundation: ServerFoundation) {
        let configuration = foundation.configuration
        database = foundation.database
        hub = foundation.database.eventHub
        hub.limit(to: EventHub.Limits(perUser: configuration.social.maxStreamsPerUser, total: configuration.social.maxStreams))
        logger = foundation.logger
        sessionCheck = configuration.streamSessionCheck
        clock = foundation.clock
    }

    var services: [any Service] { [EventListenerService(database: database, hub: hub, logger: logger, clock: clock, sessionCheck: sessionCheck)] }

    /// The hub hands out events committed from now on; streams catch up on what came before themselves.
    func start() async throws {
        hub.start(after: try await database.withConnection { db in try await EventLog.latestID(on: db) })
    }
}

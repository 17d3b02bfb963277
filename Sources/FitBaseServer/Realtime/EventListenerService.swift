import Logging
import PostgresKit
import PostgresNIO
import ServiceLifecycle

/// Runs this instance's ``EventHub``: its reader (which hands new events to the streams) and, on PostgreSQL, the
/// connection that hears every instance's commits: it `LISTEN`s on ``EventLog/channel`` and each notification wakes
/// the hub. An event committed by another instance reaches streams here in milliseconds, without any stream checking
/// the log on a timer.
///
/// The connection is opened again when it drops (with backoff, from 0.1 up to 5 seconds); once listening again the hub
/// is woken, so what committed meanwhile is delivered then, once (the hub reads after the last id it handed out). On
/// SQLite, served by one process, there is nothing to listen to: commits wake the hub in-process.
struct EventListenerService: Service {
    let database: Database
    let hub: EventHub
    let logger: Logger
    /// What streams' access tokens expire against.
    let clock: ServerClock
    /// How often open streams' sessions are checked in the database.
    var sessionCheck: Duration = .seconds(30)

    func run() async throws {
        let (database, hub, logger, clock, sessionCheck) = (self.database, self.hub, self.logger, self.clock, self.sessionCheck)
        try await cancelWhenGracefulShutdown {
            try await withThrowingDiscardingTaskGroup { tasks in
                tasks.addTask { await hub.run(database: database, logger: logger, clock: clock, sessionCheck: sessionCheck) }
                if case .postgres(let url) = database.location {
                    let configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
                    tasks.addTask { await Self.listen(configuration: configuration, hub: hub, logger: logger) }
                }
            }
        }
    }

    private static func listen(configuration: PostgresConnection.Configuration, hub: EventHub, logger: Logger) async {
        await PostgresChannelListener.listen(
            on: EventLog.channel, configuration: configuration, name: "event listener", logger: logger,
            started: { hub.publish() },  // what committed while nobody here listened
            heard: { _ in hub.publish() }
        )
    }
}

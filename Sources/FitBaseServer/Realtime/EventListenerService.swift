import Logging
import PostgresKit
import PostgresNIO
import ServiceLifecycle

/// On PostgreSQL, hears every instance's events as they commit: one connection of its own `LISTEN`s on
/// ``EventLog/channel``, and each notification wakes this instance's streams (``EventHub``), which read the log. An
/// event committed by another instance reaches streams here in milliseconds, without any stream checking the log on a
/// timer.
///
/// The connection is opened again when it drops (with backoff, from 0.1 up to 5 seconds); once listening again the
/// streams are woken, so what committed meanwhile is delivered then, once (streams read after the last id they sent).
/// On SQLite, served by one process, there is nothing to listen to: commits wake the streams in-process.
struct EventListenerService: Service {
    let location: DatabaseLocation
    let hub: EventHub
    let logger: Logger

    func run() async throws {
        guard case .postgres(let url) = location else {
            try? await gracefulShutdown()
            return
        }
        let configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        let (hub, logger) = (self.hub, self.logger)
        await cancelWhenGracefulShutdown {
            var backoff: Duration = .milliseconds(100)
            var attempt = 0
            while !Task.isCancelled {
                attempt += 1
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: attempt, logger: logger)
                    do {
                        try await connection.listen(on: EventLog.channel) { notifications in
                            backoff = .milliseconds(100)
                            hub.publish()  // what committed while nobody here listened
                            for try await _ in notifications { hub.publish() }
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try? await connection.close()
                } catch {
                    guard !Task.isCancelled else { return }
                    logger.warning("event listener lost its connection; reconnecting", metadata: ["error": "\(String(reflecting: error))", "retryIn": "\(backoff)"])
                }
                guard (try? await Task.sleep(for: backoff)) != nil else { return }
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }
}

import Logging
import PostgresNIO

/// Hears one PostgreSQL notification channel on a connection of its own, until cancelled: `started` once each `LISTEN`
/// has taken effect (what was notified while nobody listened is the caller's to catch up on), `heard` for each
/// notification, `stopped` when a connection ends. A lost connection is opened again with backoff, from 0.1 up to 5
/// seconds, and logged as `name` losing its connection.
enum PostgresChannelListener {
    static func listen(
        on channel: String, configuration: PostgresConnection.Configuration, name: String, logger: Logger,
        started: @escaping @Sendable () -> Void, heard: @escaping @Sendable (PostgresNotification) -> Void,
        stopped: @escaping @Sendable () -> Void = {}
    ) async {
        var backoff: Duration = .milliseconds(100)
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: attempt, logger: logger)
                defer { stopped() }
                do {
                    try await connection.listen(on: channel) { notifications in
                        backoff = .milliseconds(100)
                        started()
                        for try await notification in notifications { heard(notification) }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                guard !Task.isCancelled else { return }
                logger.warning("\(name) lost its connection; reconnecting", metadata: ["error": "\(String(reflecting: error))", "retryIn": "\(backoff)"])
            }
            guard (try? await Task.sleep(for: backoff)) != nil else { return }
            backoff = min(backoff * 2, .seconds(5))
        }
    }
}

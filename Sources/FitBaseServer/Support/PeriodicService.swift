import Logging
import ServiceLifecycle

/// Work each instance does on a timer (a challenge week's rollover, reminders, the retention purge, rereading the
/// signing keys): every `interval`, after a first wait of `firstRun`, until graceful shutdown.
///
/// The wait comes first because the migrations run alongside the services as the server starts. A failed turn is
/// logged and the work is done again at the next one.
struct PeriodicService: Service {
    let interval: Duration
    /// The first wait; `interval` when nil.
    var firstRun: Duration?
    let logger: Logger
    /// What the log says when a turn fails, and how loudly.
    let failure: Logger.Message
    var failureLevel: Logger.Level = .error
    let work: @Sendable () async throws -> Void

    func run() async throws {
        var wait = firstRun ?? interval
        while !Task.isCancelled {
            let pause = wait
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
            } catch {
                return
            }
            wait = interval
            do {
                try await work()
            } catch {
                logger.log(level: failureLevel, failure, metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}

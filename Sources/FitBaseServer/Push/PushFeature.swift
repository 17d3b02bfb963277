import Foundation
import Logging
import ServiceLifecycle

/// Push notifications: devices' tokens, the delivery queue and its worker, and the cycle reminders.
struct PushFeature: ServerFeature {
    let store: DeviceStore
    private let workers: [any Service]

    /// - Parameters:
    ///   - provider: where pushes go instead of Apple (tests record them); by default Apple's provider API once
    ///     configured, and the log until then.
    init(_ foundation: ServerFoundation, cycle: CycleFeature, provider: (any PushProvider)?) {
        let (database, logger) = (foundation.database, foundation.logger)
        store = DeviceStore(database: database)
        let apns = provider == nil ? foundation.configuration.apns.map { APNsProvider(configuration: $0, logger: logger, clock: foundation.clock) } : nil
        let reminders = foundation.configuration.reminderInterval.map { interval in
            PeriodicService.reminders(
                ReminderScheduler(database: database, cycle: cycle.reckoner, claimKey: foundation.masterKey.derivedKey(for: "push reminder claims")),
                every: interval, clock: foundation.clock, logger: logger
            )
        }
        workers = [
            // The provider's connections close after the worker has stopped (services stop in reverse order).
            APNsProviderService(provider: apns),
            PushWorker(database: database, provider: provider ?? apns ?? LogPushProvider(logger: logger), logger: logger, clock: foundation.clock),
        ] + (reminders.map { [$0] } ?? [])
    }

    var dataOwners: [any AccountDataOwner] { [DevicesOwner()] }
    var services: [any Service] { workers }
}

/// Closes the APNs provider's connections when the server stops (nothing to do without one).
struct APNsProviderService: Service {
    let provider: APNsProvider?

    func run() async throws {
        try? await gracefulShutdown()
        try await provider?.shutdown()
    }
}

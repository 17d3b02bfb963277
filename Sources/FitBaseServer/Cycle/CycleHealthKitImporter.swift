import FitBaseCore
import Foundation
import SQLKit

/// HealthKit's cycle samples written as the user's fertility signals and periods (``HealthKitCycleImport``): the one
/// write path of `POST /v1/cycle/healthkit` and of the cycle samples that come through the health upload.
struct CycleHealthKitImporter: Sendable {
    let store: CycleStore
    let signalStore: CycleSignalStore

    init(_ cycle: CycleFeature) {
        store = cycle.store
        signalStore = cycle.signals.store
    }

    /// The records some samples make, sealed and checked, ready to be written in a transaction.
    struct Prepared: Sendable {
        let user: UserID
        let now: Date
        let signals: [SignalWrite]
        let periods: [PeriodWrite]

        var isEmpty: Bool { signals.isEmpty && periods.isEmpty }

        /// Writes the periods and signals with their feed entries, and audits each kind once.
        func write(on db: any SQLDatabase, engine: DatabaseEngine) async throws {
            for write in periods { _ = try await write.write(.rest(user, now), on: db) }
            for write in signals { _ = try await write.write(.rest(user, now), on: db) }
            if !periods.isEmpty {
                try await AuditLog.append(
                    AuditEvent(actor: user, subject: user, action: .write, resource: PeriodsCollection.resource, count: periods.count), now: now, on: db, engine: engine
                )
            }
            if !signals.isEmpty {
                try await AuditLog.append(
                    AuditEvent(actor: user, subject: user, action: .write, resource: SignalsCollection.resource, count: signals.count), now: now, on: db, engine: engine
                )
            }
        }

        /// The problem a failed write stands for when a period broke a constraint (another period starts that day).
        func problem(forViolation error: any Error) -> Problem? {
            periods.lazy.compactMap { $0.problem(forViolation: error) }.first
        }
    }

    /// The signals and periods `samples` make for `user` (periods merged into the ones logged), each checked against
    /// `today` in the user's time zone and sealed.
    func prepare(_ samples: [HealthKitCycleImport.Sample], of user: UserID, today: CalendarDay, now: Date) async throws -> Prepared {
        let signals = HealthKitCycleImport.signals(samples)
        let flows = samples.filter { $0.identifier == HealthKitCycleImport.menstrualFlow }
        let periods = flows.isEmpty ? [] : try HealthKitCycleImport.periods(flows, existing: try await store.periods(of: user)).map { period in
            try PeriodRules.checked(PeriodDraft(period), id: period.id, today: today)
        }
        var signalWrites: [SignalWrite] = []
        for signal in signals { signalWrites.append(SignalWrite(signal: signal, row: try await signalStore.sealed(signal, of: user))) }
        var periodWrites: [PeriodWrite] = []
        for period in periods { periodWrites.append(PeriodWrite(period: period, row: try await store.sealed(period, of: user))) }
        return Prepared(user: user, now: now, signals: signalWrites, periods: periodWrites)
    }
}

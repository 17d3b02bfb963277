import FitBaseAPI
import FitBaseCore
import Foundation

/// Reads and writes one synced collection on the device. Writes are saved locally and queued in one transaction,
/// return at once, and reach the server with the next sync (which they ask for); reads never wait for the network.
public struct Repository<Record: SyncedRecord>: Sendable {
    let store: LocalStore
    let engine: SyncEngine

    /// Every record of the collection on this device, including changes not yet synced.
    public func all() async throws -> [Record] {
        try await store.records(of: Record.collection).map { try RecordCoding.decode(Record.self, from: $0.data) }
    }

    /// The record with `id`, if the device has it.
    public func get(_ id: Record.ID) async throws -> Record? {
        try await store.record(Record.collection, id: id.description).map { try RecordCoding.decode(Record.self, from: $0.data) }
    }

    /// Saves `record` (new or changed) and queues it for the server.
    public func save(_ record: Record) async throws {
        try await store.change(Record.collection, id: record.id.description, data: RecordCoding.encode(record), at: engine.configuration.clock())
        await engine.localChangeQueued()
    }

    /// Deletes the record and queues the deletion for the server.
    public func delete(_ id: Record.ID) async throws {
        try await store.change(Record.collection, id: id.description, data: nil, at: engine.configuration.clock())
        await engine.localChangeQueued()
    }
}

/// The user's training plans.
public typealias PlanRepository = Repository<TrainingPlan>
/// The user's workout history.
public typealias HistoryRepository = Repository<WorkoutLog>
/// The user's logged periods.
public typealias CycleRepository = Repository<Period>
/// The user's fertility signals (LH tests, temperatures, cervical mucus).
public typealias FertilitySignalRepository = Repository<FertilitySignal>

extension Repository where Record == FertilitySignal {
    /// Signals, oldest first.
    public func signals() async throws -> [FertilitySignal] {
        try await all().sorted { ($0.date, $0.id.description) < ($1.date, $1.id.description) }
    }
}

extension Repository where Record == TrainingPlan {
    /// Plans, latest start first.
    public func plans() async throws -> [TrainingPlan] {
        try await all().sorted { ($0.startDate, $0.id.description) > ($1.startDate, $1.id.description) }
    }
}

extension Repository where Record == WorkoutLog {
    /// Logs, newest first.
    public func history() async throws -> [WorkoutLog] {
        try await all().sorted { ($0.completedAt, $0.id.description) > ($1.completedAt, $1.id.description) }
    }

    /// Logs a completed workout of the catalog. Its type, title and local day (in `timeZone`) are the device's until the
    /// server fixes them, with the cycle position, when the log reaches it.
    @discardableResult
    public func log(
        _ workout: WorkoutID, type: WorkoutType, title: String, completedAt: Date = .now, duration: Int, rating: Int? = nil, energyBefore: Int? = nil,
        energyAfter: Int? = nil, notes: String? = nil, timeZone: TimeZone = .current
    ) async throws -> WorkoutLog {
        let log = WorkoutLog(
            id: WorkoutLogID(), workout: workout, workoutType: type, workoutTitle: title, completedAt: completedAt,
            localDate: CalendarDay(completedAt, in: timeZone), durationMinutes: duration, rating: rating, energyBefore: energyBefore,
            energyAfter: energyAfter, notes: notes, cyclePhase: nil, cycleDay: nil
        )
        try await save(log)
        return log
    }

    /// Logs a completed workout as the catalog API lists it (``log(_:type:title:completedAt:duration:rating:energyBefore:energyAfter:notes:timeZone:)``).
    @discardableResult
    public func log(
        _ workout: Components.Schemas.Workout, completedAt: Date = .now, duration: Int, rating: Int? = nil, energyBefore: Int? = nil,
        energyAfter: Int? = nil, notes: String? = nil, timeZone: TimeZone = .current
    ) async throws -> WorkoutLog {
        // The catalog's ids are UUIDs: any other is an answer this SDK cannot have come from the server.
        guard let id = WorkoutID(workout.id) else { throw FitBaseError.unexpectedResponse(statusCode: 200) }
        return try await log(
            id, type: workout._type, title: workout.title, completedAt: completedAt, duration: duration, rating: rating, energyBefore: energyBefore,
            energyAfter: energyAfter, notes: notes, timeZone: timeZone
        )
    }
}

extension Repository where Record == Period {
    /// Periods, oldest first.
    public func periods() async throws -> [Period] {
        try await all().sorted { ($0.start, $0.id.description) < ($1.start, $1.id.description) }
    }
}

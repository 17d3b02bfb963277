import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// HealthKit's cycle samples imported as the caller's fertility signals and periods (``HealthKitCycleImport``), in one
/// audited transaction.
extension CycleOperations {
    func importHealthKitCycleSamples(_ input: Operations.ImportHealthKitCycleSamples.Input) async throws -> Operations.ImportHealthKitCycleSamples.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        guard body.samples.count <= 1_000 else {
            throw Problem.invalidRequest("At most 1,000 samples per upload.", fieldErrors: [.init(field: "samples", message: "must hold at most 1,000 samples")])
        }
        let user = caller.user
        let now = clock.now
        let today = LocalCalendar.day(of: now, in: try await cycleFeature.profiles.profile(of: user).timeZone)
        var errors: [FieldError] = []
        var samples: [HealthKitCycleImport.Sample] = []
        for (index, item) in body.samples.enumerated() {
            let uuid = UUID(uuidString: item.uuid)
            if uuid == nil { errors.append(.init(field: "samples[\(index)].uuid", message: "must be a UUID")) }
            if !HealthKitCycleImport.identifiers.contains(item._type) {
                errors.append(.init(field: "samples[\(index)].type", message: "must be one of \(HealthKitCycleImport.identifiers.sorted().joined(separator: ", "))"))
            }
            let day = CalendarDay(item.date)
            if day == nil { errors.append(.init(field: "samples[\(index)].date", message: "must be a date written YYYY-MM-DD")) }
            if let day, day > today { errors.append(.init(field: "samples[\(index)].date", message: "must not be in the future")) }
            if !item.value.isFinite { errors.append(.init(field: "samples[\(index)].value", message: "must be a number")) }
            if let uuid, let day { samples.append(.init(identifier: item._type, day: day, value: item.value, uuid: uuid)) }
        }
        guard errors.isEmpty else { throw Problem.validationFailed(InvalidFields(errors)) }

        let prepared = try await cycleFeature.healthKit.prepare(samples, of: user, today: today, now: now)
        let database = cycleFeature.collection.database
        let engine = database.engine
        do {
            try await database.transaction { db in try await prepared.write(on: db, engine: engine) }
        } catch {
            throw prepared.problem(forViolation: error) ?? error
        }
        return .ok(.init(body: .json(.init(signals: prepared.signals.count, periods: prepared.periods.count))))
    }
}

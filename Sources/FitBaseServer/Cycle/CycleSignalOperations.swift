import FitBaseAPI
import FitBaseCore
import Foundation

/// Fertility signals of the signed-in user: logged, listed and removed. Reachable only by their owner.
extension CycleOperations {
    func logFertilitySignal(_ input: Operations.LogFertilitySignal.Input) async throws -> Operations.LogFertilitySignal.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = clock.now
        let signal = try await cycleFeature.signals.validated(body, id: ids.make(), user: caller.user, now: now)
        try await cycleFeature.signals.save(signal, of: caller.user, now: now)
        return .created(.init(body: .json(CycleWire.wire(signal))))
    }

    func listFertilitySignals(_ input: Operations.ListFertilitySignals.Input) async throws -> Operations.ListFertilitySignals.Output {
        let caller = try RequestScope.requireCaller()
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let from = try CalendarDay.query(input.query.from, field: "from")
        let to = try CalendarDay.query(input.query.to, field: "to")
        let matching = try await cycleFeature.signals.store.signals(of: caller.user).filter { signal in
            from.map { signal.date >= $0 } ?? true && to.map { signal.date <= $0 } ?? true
        }
        let page = matching.dropFirst(offset).prefix(limit)
        try await cycleFeature.signals.audited(read: page.count, of: caller.user)
        let next = matching.count > offset + limit ? PageRequest.cursor(offset: offset + limit) : nil
        return .ok(.init(body: .json(.init(items: page.map(CycleWire.wire), nextCursor: next))))
    }

    func deleteFertilitySignal(_ input: Operations.DeleteFertilitySignal.Input) async throws -> Operations.DeleteFertilitySignal.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = FertilitySignalID(input.path.signalId), try await cycleFeature.signals.delete(id, of: caller.user, now: clock.now) else {
            throw Problem.notFound("No fertility signal \(input.path.signalId) of yours.")
        }
        return .noContent(.init())
    }
}

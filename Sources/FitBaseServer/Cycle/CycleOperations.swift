import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// Period logging, today's phase and predictions for the signed-in user. Periods are reachable only by their owner.
protocol CycleOperations: FeatureOperations { var cycleFeature: CycleFeature { get } }

extension CycleOperations {
    func logPeriod(_ input: Operations.LogPeriod.Input) async throws -> Operations.LogPeriod.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let now = clock.now
        let period = try await cycleFeature.collection.validated(body, id: ids.make(), user: caller.user, now: now)
        try await cycleFeature.collection.save(period, of: caller.user, now: now)
        return .created(.init(body: .json(CycleWire.wire(period))))
    }

    func updatePeriod(_ input: Operations.UpdatePeriod.Input) async throws -> Operations.UpdatePeriod.Output {
        let caller = try RequestScope.requireCaller()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        guard let id = PeriodID(input.path.periodId), try await cycleFeature.store.exists(id, of: caller.user) else {
            throw Problem.notFound("No period \(input.path.periodId) of yours.")
        }
        let now = clock.now
        let period = try await cycleFeature.collection.validated(body, id: id, user: caller.user, now: now)
        try await cycleFeature.collection.save(period, of: caller.user, now: now)
        return .ok(.init(body: .json(CycleWire.wire(period))))
    }

    func deletePeriod(_ input: Operations.DeletePeriod.Input) async throws -> Operations.DeletePeriod.Output {
        let caller = try RequestScope.requireCaller()
        guard let id = PeriodID(input.path.periodId), try await cycleFeature.collection.delete(id, of: caller.user, now: clock.now) else {
            throw Problem.notFound("No period \(input.path.periodId) of yours.")
        }
        return .noContent(.init())
    }

    func getCycleHistory(_ input: Operations.GetCycleHistory.Input) async throws -> Operations.GetCycleHistory.Output {
        let caller = try RequestScope.requireCaller()
        let periods = try await cycleFeature.store.periods(of: caller.user)
        try await cycleFeature.collection.audited(read: periods.count, of: caller.user)
        let signals = periods.isEmpty ? [] : try await cycleFeature.signals.store.signals(of: caller.user)
        try await cycleFeature.signals.audited(read: signals.count, of: caller.user)
        // Each complete cycle's ovulation: detected from its signals, else estimated from the user's luteal phase.
        let past = CyclePredictor.pastOvulations(starts: periods.map(\.start), signals: signals)
        let luteal = CycleEstimates.lutealPhase(past.lutealLengths).mean
        let items = periods.enumerated().map { index, period in
            let next = index + 1 < periods.count ? periods[index + 1].start : nil
            let ovulation: Components.Schemas.CycleOvulation? =
                if let detection = past.detections[period.start] {
                    .init(date: detection.date.description, source: .detected, signals: detection.signals)
                } else if let next, (15...60).contains(period.start.days(until: next)) {
                    .init(date: next.adding(days: -Int(luteal.rounded())).description, source: .estimated, signals: [])
                } else {
                    nil
                }
            return Components.Schemas.CycleHistory.ItemsPayloadPayload(
                period: CycleWire.wire(period), cycleLength: next.map { period.start.days(until: $0) }, ovulation: ovulation
            )
        }
        return .ok(.init(body: .json(.init(items: items.reversed()))))
    }

    func getCurrentCycle(_ input: Operations.GetCurrentCycle.Input) async throws -> Operations.GetCurrentCycle.Output {
        let caller = try RequestScope.requireCaller()
        let prediction = try await predict(for: caller.user).prediction
        let today = prediction.today
        return .ok(.init(body: .json(.init(
            phase: today.phase, cycleDay: today.cycleDay, daysUntilNextPhase: today.daysUntilNextPhase,
            nextPhase: today.nextPhase, confidence: prediction.confidence,
            isLate: today.isLate
        ))))
    }

    func getCyclePredictions(_ input: Operations.GetCyclePredictions.Input) async throws -> Operations.GetCyclePredictions.Output {
        let caller = try RequestScope.requireCaller()
        let days = input.query.days ?? 35
        guard (1...120).contains(days) else {
            throw Problem.invalidRequest("days must be between 1 and 120.", fieldErrors: [.init(field: "days", message: "must be between 1 and 120")])
        }
        let (prediction, today) = try await predict(for: caller.user)
        // Day by day from the current cycle's first day (at most 60 days back) to `days` days after today: logged days
        // first, then predicted cycles of the expected length.
        let first = max(prediction.lastPeriodStart, today.adding(days: -60))
        let calendar = (0..<(first.days(until: today) + days)).map { offset -> Components.Schemas.CyclePredictions.CalendarPayloadPayload in
            let day = first.adding(days: offset)
            return .init(date: day.description, phase: prediction.position(on: day).phase, predicted: day >= today)
        }
        return .ok(.init(body: .json(.init(
            nextPeriodStart: prediction.nextPeriodStart.description,
            nextPeriodRange: .init(start: prediction.nextPeriodRange.lowerBound.description, end: prediction.nextPeriodRange.upperBound.description),
            ovulationDate: prediction.ovulationDate.description,
            ovulationSource: prediction.ovulation.source,
            ovulationSignals: prediction.ovulation.source == .detected ? prediction.ovulation.signals : nil,
            fertileWindow: .init(start: prediction.fertileWindow.lowerBound.description, end: prediction.fertileWindow.upperBound.description),
            calendar: calendar,
            basis: .init(
                cyclesUsed: prediction.basis.cyclesUsed, meanLength: prediction.basis.meanLength, variability: prediction.basis.variability,
                method: prediction.basis.method, lutealLength: prediction.basis.lutealLength, lutealCyclesUsed: prediction.basis.lutealCyclesUsed
            ),
            confidence: prediction.confidence,
            patterns: CyclePredictor.Pattern.allCases.filter(prediction.patterns.contains)
        ))))
    }

    // MARK: Helpers

    /// The prediction for today in the user's time zone; 404 `no_cycle_data` without any cycle data.
    private func predict(for user: UserID) async throws -> (prediction: CyclePredictor.Prediction, today: CalendarDay) {
        let profile = try await cycleFeature.profiles.profile(of: user)
        let today = LocalCalendar.day(of: clock.now, in: profile.timeZone)
        let periods = try await cycleFeature.store.periods(of: user)
        try await cycleFeature.collection.audited(read: periods.count, of: user)
        // The onboarding's last period start counts as a period: the signals of its cycle count too.
        let reckoned = CycleReckoning.periods(logged: periods, profile: profile, on: today)
        let signals = reckoned.isEmpty ? [] : try await cycleFeature.signals.store.signals(of: user)
        try await cycleFeature.signals.audited(read: signals.count, of: user)
        guard let prediction = try await cycleFeature.reckoner.prediction(for: user, on: today, profile: profile, periods: periods, signals: signals) else {
            throw Problem(.notFound, code: .noCycleData, detail: "Log a period (or set lastPeriodStartDate in your profile) first.")
        }
        return (prediction, today)
    }

}

import FitBaseCore
import Foundation
import Testing

@Suite struct HealthKitCycleImportTests {
    private let start = CalendarDay("2026-04-01")!

    private func sample(_ identifier: String, _ offset: Int, _ value: Double) -> HealthKitCycleImport.Sample {
        .init(identifier: identifier, day: start.adding(days: offset), value: value)
    }

    @Test func categoriesAndQuantitiesBecomeSignals() {
        let signals = HealthKitCycleImport.signals([
            sample(HealthKitCycleImport.ovulationTestResult, 12, 1), sample(HealthKitCycleImport.ovulationTestResult, 13, 2),
            sample(HealthKitCycleImport.ovulationTestResult, 14, 4), sample(HealthKitCycleImport.ovulationTestResult, 15, 3),
            sample(HealthKitCycleImport.basalBodyTemperature, 13, 36.45), sample(HealthKitCycleImport.basalBodyTemperature, 14, 41),
            sample(HealthKitCycleImport.cervicalMucusQuality, 11, 4), sample(HealthKitCycleImport.cervicalMucusQuality, 10, 3),
            sample("HKQuantityTypeIdentifierStepCount", 10, 8_000),
        ])
        #expect(signals.map(\.reading) == [
            .cervicalMucus(.creamy), .cervicalMucus(.eggWhite), .lhTest(.negative), .lhTest(.positive), .basalBodyTemperature(celsius: 36.45),
            .lhTest(.indeterminate),
        ])
        #expect(signals.map(\.date) == [10, 11, 12, 13, 13, 15].map { start.adding(days: $0) })
    }

    @Test func aSampleImportedAgainKeepsItsSignalsID() {
        let uuid = UUID()
        let strip = HealthKitCycleImport.Sample(identifier: HealthKitCycleImport.ovulationTestResult, day: start, value: 2, uuid: uuid)
        #expect(HealthKitCycleImport.signals([strip]).map(\.id) == [FertilitySignalID(rawValue: uuid)])
        #expect(HealthKitCycleImport.signals([strip]) == HealthKitCycleImport.signals([strip]))
    }

    @Test func wristTemperaturesBecomeDeviationsFromTheBaseline() throws {
        let nights = (0..<20).map { sample(HealthKitCycleImport.sleepingWristTemperature, $0, $0 < 14 ? 34.0 + ($0 % 2 == 0 ? 0.05 : -0.05) : 34.35) }
        let deviations = HealthKitCycleImport.signals(nights)
        // The first five nights make the baseline.
        #expect(deviations.count == 15)
        #expect(deviations.first?.date == start.adding(days: 5))
        guard case .wristTemperature(let warm) = try #require(deviations.last?.reading) else { Issue.record("not a wrist temperature"); return }
        #expect(abs(warm - 0.35) < 0.06)
        // And the detector finds the rise in them: the day before the first warm night.
        #expect(OvulationDetector.detect(in: deviations, cycleStart: start, through: start.adding(days: 19))?.date == start.adding(days: 13))
    }

    @Test func flowDaysBecomePeriodsOrExtendLoggedOnes() {
        let flow = HealthKitCycleImport.menstrualFlow
        let days = [sample(flow, 0, 3), sample(flow, 1, 4), sample(flow, 2, 2), sample(flow, 4, 2), sample(flow, 5, 5), sample(flow, 28, 1), sample(flow, 29, 2)]
        let fresh = HealthKitCycleImport.periods(days, existing: [])
        #expect(fresh.map(\.start) == [start, start.adding(days: 28)])
        #expect(fresh.map(\.end) == [start.adding(days: 4), start.adding(days: 29)])
        #expect(fresh.map(\.flow) == [.heavy, .light])

        // A logged period that began a day later is extended back, keeping its id; one already covering its days is left.
        let logged = Period(start: start.adding(days: 1), end: start.adding(days: 3), flow: .medium)
        let covering = Period(start: start.adding(days: 28), end: start.adding(days: 32), flow: .light)
        let merged = HealthKitCycleImport.periods(days, existing: [logged, covering])
        #expect(merged.count == 1)
        #expect(merged.first?.id == logged.id)
        #expect(merged.first?.start == start && merged.first?.end == start.adding(days: 4) && merged.first?.flow == .heavy)
    }
}

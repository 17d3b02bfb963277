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

    /// The health upload's cycle samples: each kind's value rules, °F read as °C, the day of `start` in the user's time
    /// zone, and every broken rule named by its field.
    @Test func healthUploadSamplesAreCheckedByTheirKindsRules() throws {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let uuid = UUID()
        func input(_ type: String, _ value: Double?, unit: String? = nil, id: String? = nil, start: Date? = nil) -> HealthSampleInput {
            HealthSampleInput(id: id ?? uuid.uuidString, type: type, value: value, unit: unit, start: start ?? now.addingTimeInterval(-3_600), sourceId: "com.apple.Health")
        }
        func fields(_ result: Result<HealthKitCycleImport.Sample, InvalidFields>) -> [String] {
            if case .failure(let invalid) = result { invalid.errors.map(\.field) } else { [] }
        }
        let day = start
        let validate = { (input: HealthSampleInput) in HealthKitCycleImport.validate(input, now: now, day: { _ in day }) }

        let bbt = try validate(input("basalBodyTemperature", 97.9, unit: "degF")).get()
        #expect(bbt.identifier == HealthKitCycleImport.basalBodyTemperature && abs(bbt.value - 36.611) < 0.0005 && bbt.day == day && bbt.uuid == uuid)
        #expect(try validate(input("ovulationTestResult", 2)).get().value == 2)
        #expect(try validate(input("sleepingWristTemperature", 35.4, unit: "DEGC")).get().value == 35.4)
        #expect(HealthKitCycleImport.uploadTypes.count == HealthKitCycleKind.allCases.count)

        #expect(fields(validate(input("ovulationTestResult", 5))) == ["value"])
        #expect(fields(validate(input("ovulationTestResult", 1.5))) == ["value"])
        #expect(fields(validate(input("menstrualFlow", nil))) == ["value"])
        #expect(fields(validate(input("cervicalMucusQuality", 3, unit: "degC"))) == ["unit"])
        #expect(fields(validate(input("basalBodyTemperature", 34.9))) == ["value"])
        #expect(fields(validate(input("basalBodyTemperature", 36.5, unit: "kelvin"))) == ["unit"])
        #expect(fields(validate(input("sleepingWristTemperature", .nan))) == ["value"])
        #expect(fields(validate(input("heartRate", 60))) == ["type"])
        #expect(fields(validate(input("menstrualFlow", 2, id: "strip-1", start: now.addingTimeInterval(3_600)))) == ["id", "start"])
    }
}

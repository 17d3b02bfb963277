import Foundation
import Testing

@testable import FitBaseCore

@Suite struct HealthSampleTests {
    private let now = Date(timeIntervalSince1970: 1_790_000_000)  // 2026-09-21
    private let sampleID = "0F2B7C4E-9A1D-4E3B-8C5F-6A7B8C9D0E1F"

    private func input(
        _ type: String, value: Double? = nil, unit: String? = nil, systolic: Double? = nil, diastolic: Double? = nil,
        stage: String? = nil, startOffset: TimeInterval = -3600, duration: TimeInterval? = nil
    ) -> HealthSampleInput {
        let start = now.addingTimeInterval(startOffset)
        return HealthSampleInput(
            id: sampleID, type: type, value: value, unit: unit, systolic: systolic, diastolic: diastolic, stage: stage,
            start: start, end: duration.map { start.addingTimeInterval($0) }, sourceId: "com.apple.health")
    }

    private func value(_ input: HealthSampleInput) throws -> HealthValue {
        try HealthSampleValidator.validate(input, now: now).get().value
    }

    private func errors(_ input: HealthSampleInput) -> [FieldError] {
        guard case .failure(let failure) = HealthSampleValidator.validate(input, now: now) else { return [] }
        return failure.errors
    }

    private func fields(_ input: HealthSampleInput) -> [String] { errors(input).map(\.field) }

    @Test func heartRateConvertsEveryAcceptedUnit() throws {
        #expect(try value(input("heartRate", value: 72, unit: "count/min")) == .heartRate(beatsPerMinute: 72))
        #expect(try value(input("heartRate", value: 72, unit: "bpm")) == .heartRate(beatsPerMinute: 72))
        #expect(try value(input("heartRate", value: 72, unit: "/min")) == .heartRate(beatsPerMinute: 72))
        #expect(try value(input("heartRate", value: 72)) == .heartRate(beatsPerMinute: 72))
        #expect(try value(input("heartRate", value: 1.5, unit: "count/s")) == .heartRate(beatsPerMinute: 90))
        #expect(try value(input("heartRate", value: 2, unit: "Hz")) == .heartRate(beatsPerMinute: 120))
        #expect(try value(input("heartRate", value: 60, unit: "BPM")) == .heartRate(beatsPerMinute: 60))
    }

    @Test func sampleKeepsItsFieldsAndUUIDOfAnyCase() throws {
        var lower = input("heartRate", value: 72, duration: 60)
        lower.id = sampleID.lowercased()
        lower.device = "Apple Watch"
        lower.metadata = ["HKWasUserEntered": "0"]
        let sample = try HealthSampleValidator.validate(lower, now: now).get()
        #expect(sample.id == HealthSampleID(sampleID))
        #expect(sample.type == .heartRate)
        #expect(sample.start == lower.start)
        #expect(sample.end == lower.start.addingTimeInterval(60))
        #expect(sample.sourceId == "com.apple.health")
        #expect(sample.device == "Apple Watch")
        #expect(sample.metadata == ["HKWasUserEntered": "0"])
    }

    @Test func heartRateOutsideTwentyToThreeHundredIsRefused() {
        #expect(
            errors(input("heartRate", value: 19.9)) == [
                .init(field: "value", message: "must be between 20 and 300 count/min")
            ])
        #expect(fields(input("heartRate", value: 301)) == ["value"])
        #expect(fields(input("heartRate", value: 6, unit: "Hz")) == ["value"])  // 360 count/min
        #expect(fields(input("heartRate", value: 20)).isEmpty)
        #expect(fields(input("heartRate", value: 300)).isEmpty)
        #expect(errors(input("heartRate")) == [.init(field: "value", message: "is required for heartRate")])
        #expect(errors(input("heartRate", value: .nan)) == [.init(field: "value", message: "must be a finite number")])
        #expect(fields(input("heartRate", value: .infinity)) == ["value"])
    }

    @Test func stepsNeedAnIntervalAndAPlausibleRate() throws {
        #expect(try value(input("steps", value: 1234, unit: "count", duration: 600)) == .steps(count: 1234))
        #expect(try value(input("steps", value: 12.5, duration: 600)) == .steps(count: 12.5))
        #expect(try value(input("steps", value: 0, duration: 0)) == .steps(count: 0))
        #expect(errors(input("steps", value: 10)) == [.init(field: "end", message: "is required for steps")])
        #expect(fields(input("steps", value: -1, duration: 60)) == ["value"])
        #expect(fields(input("steps", value: 100_001, duration: 86_400)) == ["value"])
        #expect(fields(input("steps", value: 1200, duration: 60)).isEmpty)  // exactly 20 per second
        #expect(
            errors(input("steps", value: 1201, duration: 60))
                == [.init(field: "value", message: "must be at most 20 steps per second over the sample's interval")])
        #expect(fields(input("steps", value: 10, duration: 86_401)) == ["end"])
        #expect(
            errors(input("steps", value: 10, unit: "km", duration: 60)) == [
                .init(field: "unit", message: "must be one of count")
            ])
    }

    @Test func oxygenSaturationTreatsSmallPercentValuesAsFractions() throws {
        #expect(try value(input("oxygenSaturation", value: 0.97, unit: "%")) == .oxygenSaturation(percent: 97))
        #expect(try value(input("oxygenSaturation", value: 97, unit: "%")) == .oxygenSaturation(percent: 97))
        #expect(try value(input("oxygenSaturation", value: 1, unit: "%")) == .oxygenSaturation(percent: 100))
        #expect(try value(input("oxygenSaturation", value: 0.95, unit: "fraction")) == .oxygenSaturation(percent: 95))
        #expect(try value(input("oxygenSaturation", value: 0.5, unit: "1")) == .oxygenSaturation(percent: 50))
        #expect(try value(input("oxygenSaturation", value: 96)) == .oxygenSaturation(percent: 96))
        #expect(
            errors(input("oxygenSaturation", value: 0.4, unit: "%"))
                == [.init(field: "value", message: "must be between 50 and 100 % (0.5 and 1 as a fraction)")])
        #expect(fields(input("oxygenSaturation", value: 100.5, unit: "%")) == ["value"])
        #expect(fields(input("oxygenSaturation", value: 97, unit: "fraction")) == ["value"])  // 9,700 %
        #expect(fields(input("oxygenSaturation", value: 97, duration: 86_401)) == ["end"])
    }

    @Test func bloodPressureConvertsKilopascalsAndChecksBothNumbers() throws {
        #expect(
            try value(input("bloodPressure", systolic: 120, diastolic: 80))
                == .bloodPressure(systolic: 120, diastolic: 80))
        #expect(
            try value(input("bloodPressure", unit: "mmHg", systolic: 120, diastolic: 80))
                == .bloodPressure(systolic: 120, diastolic: 80))
        #expect(
            try value(input("bloodPressure", unit: "kPa", systolic: 16, diastolic: 10.5))
                == .bloodPressure(systolic: 16 * 7.50062, diastolic: 10.5 * 7.50062))
        #expect(
            errors(input("bloodPressure", value: 120))
                == [
                    .init(field: "systolic", message: "is required for bloodPressure"),
                    .init(field: "diastolic", message: "is required for bloodPressure"),
                ])
        #expect(
            errors(input("bloodPressure", systolic: 49, diastolic: 201))
                == [
                    .init(field: "systolic", message: "must be between 50 and 300 mmHg"),
                    .init(field: "diastolic", message: "must be between 20 and 200 mmHg"),
                ])
        #expect(fields(input("bloodPressure", systolic: 301, diastolic: 19)) == ["systolic", "diastolic"])
        #expect(
            errors(input("bloodPressure", systolic: 80, diastolic: 80)) == [
                .init(field: "diastolic", message: "must be below systolic")
            ])
        // 120/80 kPa is 900/600 mmHg.
        #expect(fields(input("bloodPressure", unit: "kPa", systolic: 120, diastolic: 80)) == ["systolic", "diastolic"])
        #expect(
            errors(input("bloodPressure", unit: "psi", systolic: 120, diastolic: 80))
                == [.init(field: "unit", message: "must be one of mmHg, kPa")])
    }

    @Test func sleepNeedsAStageAndAPositiveIntervalOfAtMostADay() throws {
        #expect(try value(input("sleep", stage: "asleepREM", duration: 1800)) == .sleep(stage: .asleepREM))
        #expect(try value(input("sleep", unit: "", stage: "inBed", duration: 86_400)) == .sleep(stage: .inBed))
        #expect(errors(input("sleep", stage: "asleepCore")) == [.init(field: "end", message: "is required for sleep")])
        #expect(
            errors(input("sleep", stage: "asleepCore", duration: 0)) == [
                .init(field: "end", message: "must be after start for sleep")
            ])
        #expect(
            errors(input("sleep", stage: "asleepCore", duration: 86_401))
                == [.init(field: "end", message: "must be at most 24 hours after start")])
        #expect(errors(input("sleep", duration: 60)) == [.init(field: "stage", message: "is required for sleep")])
        #expect(
            errors(input("sleep", stage: "napping", duration: 60))
                == [
                    .init(
                        field: "stage",
                        message: "must be one of inBed, awake, asleepUnspecified, asleepCore, asleepDeep, asleepREM")
                ])
        #expect(
            errors(input("sleep", unit: "min", stage: "awake", duration: 60))
                == [.init(field: "unit", message: "must be absent for sleep")])
    }

    @Test func heartRateUnitErrorNamesTheAcceptedUnits() {
        #expect(
            errors(input("heartRate", value: 72, unit: "beats"))
                == [.init(field: "unit", message: "must be one of count/min, bpm, /min, count/s, Hz")])
    }

    @Test func startMustBeRecentButNotInTheFuture() {
        #expect(fields(input("heartRate", value: 72, startOffset: 300)).isEmpty)  // clock skew allowance
        #expect(
            errors(input("heartRate", value: 72, startOffset: 301))
                == [.init(field: "start", message: "must not be in the future")])
        let old = input(
            "heartRate", value: 72, startOffset: Date(timeIntervalSince1970: 946_684_799).timeIntervalSince(now))
        #expect(errors(old) == [.init(field: "start", message: "must not be before 2000-01-01")])
        #expect(
            errors(input("heartRate", value: 72, duration: -1)) == [
                .init(field: "end", message: "must not be before start")
            ])
    }

    @Test func identityAndTextFieldsAreChecked() {
        var bad = input("heartRate", value: 72)
        bad.id = "not-a-uuid"
        #expect(errors(bad) == [.init(field: "id", message: "must be a UUID")])
        bad = input("pulse", value: 72)
        #expect(
            errors(bad)
                == [
                    .init(
                        field: "type",
                        message: "must be one of heartRate, steps, sleep, oxygenSaturation, bloodPressure")
                ])
        bad = input("heartRate", value: 72)
        bad.sourceId = ""
        #expect(fields(bad) == ["sourceId"])
        bad.sourceId = String(repeating: "s", count: 201)
        bad.device = String(repeating: "d", count: 201)
        #expect(fields(bad) == ["sourceId", "device"])
        var metadata = Dictionary(uniqueKeysWithValues: (0..<21).map { ("k\($0)", "v") })
        metadata[""] = String(repeating: "v", count: 501)
        bad = input("heartRate", value: 72)
        bad.metadata = metadata
        #expect(
            errors(bad).map(\.message)
                == [
                    "must have at most 20 keys", "keys must be 1 to 64 characters",
                    "values must be at most 500 characters",
                ])
        bad.sourceId = String(repeating: "s", count: 200)
        bad.device = String(repeating: "d", count: 200)
        bad.metadata = Dictionary(
            uniqueKeysWithValues: (0..<20).map {
                (String(repeating: "k", count: $0 + 45), String(repeating: "v", count: 500))
            })
        #expect(fields(bad).isEmpty)
    }

    @Test func everyInvalidFieldIsReportedAtOnce() {
        var bad = input("steps", value: .nan, unit: "steps", startOffset: 3600)
        bad.id = "123"
        bad.sourceId = ""
        #expect(fields(bad) == ["id", "unit", "value", "start", "end", "sourceId"])
        bad = input("oxygenSaturation", value: 30, startOffset: 600, duration: -60)
        #expect(fields(bad) == ["value", "start", "end"])
    }

    @Test func samplesRoundTripThroughJSON() throws {
        let sample = try HealthSampleValidator.validate(input("sleep", stage: "asleepDeep", duration: 600), now: now)
            .get()
        let decoded = try JSONDecoder().decode(HealthSample.self, from: JSONEncoder().encode(sample))
        #expect(decoded == sample)
    }

    @Test func typesKnowTheirCanonicalUnitsAndStages() {
        #expect(HealthSampleType.allCases.map(\.canonicalUnit) == ["count/min", "count", nil, "%", "mmHg"])
        #expect(SleepStage.allCases.filter(\.isAsleep) == [.asleepUnspecified, .asleepCore, .asleepDeep, .asleepREM])
        #expect(HealthValue.bloodPressure(systolic: 120, diastolic: 80).type == .bloodPressure)
    }
}

import FitBaseClient
import FitBaseCore
import Foundation
import HealthKit
import Testing

/// ``HealthKitAnchoredSource`` over HealthKit's anchored queries: pages, anchors, deletions, the samples' translation
/// into Core's units, and the authorization request.
@Suite struct HealthKitSourceTests {
    let store = HKHealthStore()
    let start = Date(timeIntervalSince1970: 1_780_000_000)

    private func heartRate(_ beatsPerMinute: Double, minute: Int) -> HKQuantitySample {
        let at = start.addingTimeInterval(Double(minute) * 60)
        return HKQuantitySample(
            type: HKQuantityType(.heartRate),
            quantity: HKQuantity(unit: .count().unitDivided(by: .minute()), doubleValue: beatsPerMinute),
            start: at, end: at)
    }

    @Test func aLongHistoryIsReadPageByPageFromEachNewAnchor() async throws {
        _HealthKitShim.add((0..<5).map { heartRate(60 + Double($0), minute: $0) }, to: store)
        let source = HealthKitAnchoredSource(store: store)
        let first = try await source.samples(of: .heartRate, after: nil, limit: 2)
        #expect(first.samples.map(\.value) == [.heartRate(beatsPerMinute: 60), .heartRate(beatsPerMinute: 61)])
        #expect(first.hasMore)
        let second = try await source.samples(of: .heartRate, after: first.anchor, limit: 2)
        #expect(second.samples.map(\.value) == [.heartRate(beatsPerMinute: 62), .heartRate(beatsPerMinute: 63)])
        #expect(second.hasMore)
        let last = try await source.samples(of: .heartRate, after: second.anchor, limit: 2)
        #expect(last.samples.map(\.value) == [.heartRate(beatsPerMinute: 64)])
        #expect(!last.hasMore)
        // Nothing new: nothing read, and the anchor still follows everything read.
        let idle = try await source.samples(of: .heartRate, after: last.anchor, limit: 2)
        #expect(idle.samples.isEmpty && !idle.hasMore)
        _HealthKitShim.add([heartRate(99, minute: 9)], to: store)
        let later = try await source.samples(of: .heartRate, after: idle.anchor, limit: 2)
        #expect(later.samples.map(\.value) == [.heartRate(beatsPerMinute: 99)])
        // Reading again from an anchor gives the same samples.
        let again = try await source.samples(of: .heartRate, after: first.anchor, limit: 2)
        #expect(again.samples.map(\.id) == second.samples.map(\.id))
    }

    @Test func deletedSamplesAreNotUploadedAndTheirDeletionsDoNotEndThePaging() async throws {
        let samples = (0..<3).map { heartRate(70 + Double($0), minute: $0) }
        _HealthKitShim.add(samples, to: store)
        _HealthKitShim.delete(samples[1], from: store)
        let source = HealthKitAnchoredSource(store: store)
        let all = try await source.samples(of: .heartRate, after: nil, limit: 10)
        #expect(all.samples.map(\.value) == [.heartRate(beatsPerMinute: 70), .heartRate(beatsPerMinute: 72)])
        // A page filled by deletions alone still says more may follow.
        _HealthKitShim.delete(samples[0], from: store)
        _HealthKitShim.delete(samples[2], from: store)
        _HealthKitShim.add([heartRate(80, minute: 5)], to: store)
        let deletions = try await source.samples(of: .heartRate, after: all.anchor, limit: 2)
        #expect(deletions.samples.isEmpty)
        #expect(deletions.hasMore)
        let next = try await source.samples(of: .heartRate, after: deletions.anchor, limit: 2)
        #expect(next.samples.map(\.value) == [.heartRate(beatsPerMinute: 80)])
    }

    @Test func eachTypeReadsOnlyItsOwnSamples() async throws {
        let steps = HKQuantitySample(
            type: HKQuantityType(.stepCount), quantity: HKQuantity(unit: .count(), doubleValue: 1_200), start: start,
            end: start.addingTimeInterval(600))
        _HealthKitShim.add([heartRate(64, minute: 0), steps], to: store)
        let source = HealthKitAnchoredSource(store: store)
        #expect(
            try await source.samples(of: .steps, after: nil, limit: 10).samples.map(\.value) == [.steps(count: 1_200)])
        #expect(
            try await source.samples(of: .heartRate, after: nil, limit: 10).samples.map(\.value) == [
                .heartRate(beatsPerMinute: 64)
            ])
    }

    @Test func samplesArriveInCoreUnitsWithTheirSourceAndDevice() async throws {
        let device = HKDevice(
            name: "Watch", manufacturer: "Apple", model: "Watch7,1", hardwareVersion: nil, firmwareVersion: nil,
            softwareVersion: nil,
            localIdentifier: nil, udiDeviceIdentifier: nil)
        let oxygen = HKQuantitySample(
            type: HKQuantityType(.oxygenSaturation), quantity: HKQuantity(unit: .percent(), doubleValue: 0.97),
            start: start, end: start,
            device: device, metadata: ["HKWasUserEntered": 0])
        let systolic = HKQuantitySample(
            type: HKQuantityType(.bloodPressureSystolic),
            quantity: HKQuantity(unit: .millimeterOfMercury(), doubleValue: 121), start: start, end: start)
        let diastolic = HKQuantitySample(
            type: HKQuantityType(.bloodPressureDiastolic),
            quantity: HKQuantity(unit: .millimeterOfMercury(), doubleValue: 79), start: start, end: start)
        let pressure = HKCorrelation(
            type: HKCorrelationType(.bloodPressure), start: start, end: start, objects: [systolic, diastolic])
        let deep = HKCategorySample(
            type: HKCategoryType(.sleepAnalysis), value: 4, start: start, end: start.addingTimeInterval(1_800))
        let future = HKCategorySample(
            type: HKCategoryType(.sleepAnalysis), value: 42, start: start, end: start.addingTimeInterval(60))
        _HealthKitShim.add([oxygen, pressure, deep, future], to: store)
        let source = HealthKitAnchoredSource(store: store)

        let read = try #require(try await source.samples(of: .oxygenSaturation, after: nil, limit: 10).samples.first)
        #expect(read.value == .oxygenSaturation(percent: 97))
        #expect(read.id == HealthSampleID(rawValue: oxygen.uuid))
        #expect(read.device == "Watch7,1")
        #expect(read.sourceId == oxygen.sourceRevision.source.bundleIdentifier)
        #expect(read.metadata == ["HKWasUserEntered": "0"])
        let pressures = try await source.samples(of: .bloodPressure, after: nil, limit: 10).samples
        #expect(pressures.map(\.value) == [.bloodPressure(systolic: 121, diastolic: 79)])
        // A sleep value this version does not know is left out.
        let sleep = try await source.samples(of: .sleep, after: nil, limit: 10).samples
        #expect(sleep.map(\.value) == [.sleep(stage: .asleepDeep)])
    }

    @Test func aNightsWristTemperatureComesWithTheNightsBeforeIt() async throws {
        let nights = (0..<35).map { night in
            let at = start.addingTimeInterval(Double(night) * 86_400)
            return HKQuantitySample(
                type: HKQuantityType(.appleSleepingWristTemperature),
                quantity: HKQuantity(unit: .degreeCelsius(), doubleValue: 36 + Double(night) / 100),
                start: at, end: at.addingTimeInterval(28_800))
        }
        _HealthKitShim.add(Array(nights[..<34]), to: store)
        let source = HealthKitAnchoredSource(store: store)
        let first = try await source.cycleSamples(of: .sleepingWristTemperature, after: nil, limit: 100)
        #expect(first.samples.count == 34)
        _HealthKitShim.add([nights[34]], to: store)
        let next = try await source.cycleSamples(of: .sleepingWristTemperature, after: first.anchor, limit: 100)
        // The new night and the 30 nights before it, oldest first, in °C.
        #expect(next.samples.count == 31)
        #expect(next.samples.map(\.start) == nights[4...].map(\.startDate))
        #expect(next.samples.last?.value == 36.34)
        #expect(next.samples.allSatisfy { $0.unit == "degC" && $0.type == "sleepingWristTemperature" })
    }

    @Test func cycleCategoriesCarryTheirRawValue() async throws {
        let flow = HKCategorySample(type: HKCategoryType(.menstrualFlow), value: 3, start: start, end: start)
        _HealthKitShim.add([flow], to: store)
        let read = try await HealthKitAnchoredSource(store: store).cycleSamples(
            of: .menstrualFlow, after: nil, limit: 10)
        #expect(read.samples.map(\.value) == [3])
        #expect(read.samples.map(\.id) == [flow.uuid.uuidString])
    }

    @Test func askingForAccessOnceCoversEveryTypeTheUploadReads() async throws {
        let source = HealthKitAnchoredSource(store: store)
        #expect(await !source.hasRequestedAuthorization())
        try await source.requestAuthorization()
        #expect(await source.hasRequestedAuthorization())
        let prompts = _HealthKitShim.authorizationPrompts(of: store)
        #expect(prompts.count == 1)
        // Blood pressure is asked as its two quantities: HealthKit refuses a correlation type.
        #expect(prompts.types.contains(HKQuantityType(.bloodPressureSystolic)))
        #expect(!prompts.types.contains(HKCorrelationType(.bloodPressure)))
        #expect(prompts.types.contains(HKQuantityType(.appleSleepingWristTemperature)))
    }

    @Test func aStatusHealthKitCannotGiveCountsAsNotAsked() async throws {
        let source = HealthKitAnchoredSource(store: store)
        try await source.requestAuthorization()
        _HealthKitShim.failNextCall(of: store, with: CocoaError(.featureUnsupported))
        #expect(await !source.hasRequestedAuthorization())
        _HealthKitShim.failNextCall(of: store, with: CocoaError(.featureUnsupported))
        await #expect(throws: CocoaError.self) { try await source.requestAuthorization() }
    }

    @Test func anAnchorOfAnotherFormatIsAnError() async {
        let source = HealthKitAnchoredSource(store: store)
        await #expect(throws: (any Error).self) {
            try await source.samples(
                of: .heartRate, after: HealthKitAnchor(data: Data("not an archive".utf8)), limit: 10)
        }
    }
}

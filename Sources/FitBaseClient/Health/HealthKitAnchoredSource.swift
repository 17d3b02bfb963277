#if canImport(HealthKit)
import FitBaseCore
import Foundation
import HealthKit

/// ``HealthKitSource`` over HealthKit: each read is one anchored object query (`HKAnchoredObjectQueryDescriptor`) of
/// the type's HealthKit sample type (heart rate, step count, oxygen saturation, the blood-pressure correlation, sleep
/// analysis), with the anchor archived as its bytes. Ask for read access once, before the first upload
/// (``requestAuthorization()``); HealthKit answers a read the user did not allow with no samples rather than an error.
public final class HealthKitAnchoredSource: HealthKitSource {
    private let store: HKHealthStore

    /// A source reading `store` (one per app, as Apple recommends).
    public init(store: HKHealthStore = HKHealthStore()) {
        self.store = store
    }

    /// Whether this device has HealthKit at all (not on iPad before iPadOS 17, for instance).
    public static var isAvailable: Bool { HKHealthStore.isHealthDataAvailable() }

    /// What the upload reads: the five types (blood pressure as its systolic and diastolic quantities: a correlation
    /// type cannot be asked for itself) and the five kinds of cycle data (``HealthKitCycleKind``).
    static let readTypes: Set<HKObjectType> = [
        HKQuantityType(.heartRate), HKQuantityType(.stepCount), HKQuantityType(.oxygenSaturation),
        HKQuantityType(.bloodPressureSystolic), HKQuantityType(.bloodPressureDiastolic), HKCategoryType(.sleepAnalysis),
        // Cycle data, which becomes fertility signals and periods.
        HKCategoryType(.ovulationTestResult), HKCategoryType(.cervicalMucusQuality), HKCategoryType(.menstrualFlow),
        HKQuantityType(.basalBodyTemperature), HKQuantityType(.appleSleepingWristTemperature),
    ]

    /// Asks the user to let the app read ``readTypes`` (HealthKit shows its sheet for the types not asked yet).
    public func requestAuthorization() async throws {
        try await store.requestAuthorization(toShare: [], read: Self.readTypes)
    }

    /// Whether the user was asked about every type the upload reads. HealthKit never says whether reading was
    /// allowed, and answers an error (or `unknown`) here as "not asked".
    public func hasRequestedAuthorization() async -> Bool {
        (try? await store.statusForAuthorizationRequest(toShare: [], read: Self.readTypes)) == .unnecessary
    }

    public func samples(of type: HealthSampleType, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitChanges {
        let read = try await anchoredRead(Self.sampleType(of: type), after: anchor, limit: limit)
        // HealthKit returned `limit` objects: more may follow the new anchor.
        return HealthKitChanges(samples: read.samples.compactMap { Self.sample($0, as: type) }, anchor: read.anchor, hasMore: read.count >= limit)
    }

    public func cycleSamples(of kind: HealthKitCycleKind, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitCycleChanges {
        let sampleType = Self.sampleType(of: kind)
        let read = try await anchoredRead(sampleType, after: anchor, limit: limit)
        var samples = read.samples
        // A night's wrist temperature is read against the nights before it: send up to 30 of those with the new ones.
        if kind == .sleepingWristTemperature, let first = samples.map(\.startDate).min() {
            samples = try await latest(sampleType, startingBefore: first, limit: 30).reversed() + samples
        }
        return HealthKitCycleChanges(samples: samples.compactMap { Self.input($0, as: kind) }, anchor: read.anchor, hasMore: read.count >= limit)
    }

    /// One anchored read: the samples added after `anchor`, how many objects HealthKit returned (deletions count
    /// towards `limit`), and the anchor following them (archived). Deleted samples are not reported: the server keeps
    /// what was uploaded.
    private func anchoredRead(_ sampleType: HKSampleType, after anchor: HealthKitAnchor?, limit: Int) async throws -> (samples: [HKSample], count: Int, anchor: HealthKitAnchor) {
        let start = try anchor.flatMap { try NSKeyedUnarchiver.unarchivedObject(ofClass: HKQueryAnchor.self, from: $0.data) }
        let query = HKAnchoredObjectQueryDescriptor(predicates: [.sample(type: sampleType)], anchor: start, limit: limit)
        let result = try await query.result(for: store)
        let data = try NSKeyedArchiver.archivedData(withRootObject: result.newAnchor, requiringSecureCoding: true)
        return (result.addedSamples, result.addedSamples.count + result.deletedObjects.count, HealthKitAnchor(data: data))
    }

    /// The newest `limit` samples of `sampleType` that started before `date`, newest first.
    private func latest(_ sampleType: HKSampleType, startingBefore date: Date, limit: Int) async throws -> [HKSample] {
        let predicate = HKQuery.predicateForSamples(withStart: nil, end: date, options: [])
        let query = HKSampleQueryDescriptor(
            predicates: [.sample(type: sampleType, predicate: predicate)], sortDescriptors: [SortDescriptor(\.startDate, order: .reverse)],
            limit: limit)
        return try await query.result(for: store).filter { $0.startDate < date }
    }

    /// HealthKit's sample type holding `kind`.
    static func sampleType(of kind: HealthKitCycleKind) -> HKSampleType {
        switch kind {
        case .ovulationTestResult: HKCategoryType(.ovulationTestResult)
        case .cervicalMucusQuality: HKCategoryType(.cervicalMucusQuality)
        case .menstrualFlow: HKCategoryType(.menstrualFlow)
        case .basalBodyTemperature: HKQuantityType(.basalBodyTemperature)
        case .sleepingWristTemperature: HKQuantityType(.appleSleepingWristTemperature)
        }
    }

    /// The health upload's input of a cycle sample: a category's raw value, or a temperature in °C.
    static func input(_ object: HKSample, as kind: HealthKitCycleKind) -> HealthSampleInput? {
        let value: Double
        if kind.isTemperature {
            guard let quantity = (object as? HKQuantitySample)?.quantity else { return nil }
            value = quantity.doubleValue(for: .degreeCelsius())
        } else {
            guard let category = object as? HKCategorySample else { return nil }
            value = Double(category.value)
        }
        return HealthSampleInput(
            id: object.uuid.uuidString, type: kind.rawValue, value: value, unit: kind.isTemperature ? "degC" : nil, start: object.startDate,
            end: object.endDate, sourceId: object.sourceRevision.source.bundleIdentifier, device: object.device?.model)
    }

    /// HealthKit's sample type holding `type`.
    static func sampleType(of type: HealthSampleType) -> HKSampleType {
        switch type {
        case .heartRate: HKQuantityType(.heartRate)
        case .steps: HKQuantityType(.stepCount)
        case .oxygenSaturation: HKQuantityType(.oxygenSaturation)
        case .bloodPressure: HKCorrelationType(.bloodPressure)
        case .sleep: HKCategoryType(.sleepAnalysis)
        }
    }

    /// Core's sample of a HealthKit object, in the canonical unit; `nil` for an object that is not of `type` or a
    /// sleep value this version does not know.
    static func sample(_ object: HKSample, as type: HealthSampleType) -> HealthSample? {
        let value: HealthValue
        switch type {
        case .heartRate:
            guard let quantity = (object as? HKQuantitySample)?.quantity else { return nil }
            value = .heartRate(beatsPerMinute: quantity.doubleValue(for: HKUnit.count().unitDivided(by: .minute())))
        case .steps:
            guard let quantity = (object as? HKQuantitySample)?.quantity else { return nil }
            value = .steps(count: quantity.doubleValue(for: .count()))
        case .oxygenSaturation:
            // HealthKit's percent unit holds fractions (0.97); Core's canonical unit is the percentage (97).
            guard let quantity = (object as? HKQuantitySample)?.quantity else { return nil }
            value = .oxygenSaturation(percent: quantity.doubleValue(for: .percent()) * 100)
        case .bloodPressure:
            guard let correlation = object as? HKCorrelation,
                let systolic = correlation.objects(for: HKQuantityType(.bloodPressureSystolic)).first as? HKQuantitySample,
                let diastolic = correlation.objects(for: HKQuantityType(.bloodPressureDiastolic)).first as? HKQuantitySample
            else { return nil }
            value = .bloodPressure(
                systolic: systolic.quantity.doubleValue(for: .millimeterOfMercury()), diastolic: diastolic.quantity.doubleValue(for: .millimeterOfMercury()))
        case .sleep:
            guard let category = object as? HKCategorySample, let stage = sleepStage(category.value) else { return nil }
            value = .sleep(stage: stage)
        }
        let metadata = object.metadata.flatMap { entries in HealthSampleValidator.fitting(metadata: entries.mapValues { String(describing: $0) }) }
        return HealthSample(
            id: HealthSampleID(rawValue: object.uuid), value: value, start: object.startDate, end: object.endDate,
            sourceId: object.sourceRevision.source.bundleIdentifier, device: object.device?.model, metadata: metadata)
    }

    /// `HKCategoryValueSleepAnalysis` by its raw values (the asleep stages since iOS 16; 1 was `asleep` before).
    static func sleepStage(_ raw: Int) -> SleepStage? {
        switch raw {
        case 0: .inBed
        case 1: .asleepUnspecified
        case 2: .awake
        case 3: .asleepCore
        case 4: .asleepDeep
        case 5: .asleepREM
        default: nil
        }
    }
}
#endif

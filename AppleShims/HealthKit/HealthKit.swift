// Shim of the part of Apple's HealthKit FitBase's adapter calls (authorization, the async query descriptors, the
// sample classes it reads), written from Apple's documentation: same names, labels, optionality, async/throws and
// Sendable-ness as the SDK. CI only (scripts/ci/apple-adapters.sh). `_HealthKitShim` scripts a store's history for
// AppleAdapterTests; adapters never name it.
import Foundation
import Synchronization

// MARK: Types

/// An abstract superclass with subclasses that identify a specific type of data for the HealthKit store.
open class HKObjectType: NSObject, @unchecked Sendable {
    /// A unique string identifying the HealthKit object type.
    public let identifier: String

    init(identifier: String) {
        self.identifier = identifier
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? HKObjectType else { return false }
        return type(of: other) == type(of: self) && other.identifier == identifier
    }

    open override var hash: Int { identifier.hashValue }
}

/// An abstract superclass for all classes that identify a specific type of sample when working with the HealthKit store.
open class HKSampleType: HKObjectType, @unchecked Sendable {}

/// A type that identifies samples that store numerical values.
public final class HKQuantityType: HKSampleType, @unchecked Sendable {
    /// Creates a quantity type for the specified identifier.
    public convenience init(_ identifier: HKQuantityTypeIdentifier) {
        self.init(identifier: identifier.rawValue)
    }
}

/// A type that identifies samples that contain a value from a small set of possible values.
public final class HKCategoryType: HKSampleType, @unchecked Sendable {
    /// Creates a category type for the specified identifier.
    public convenience init(_ identifier: HKCategoryTypeIdentifier) {
        self.init(identifier: identifier.rawValue)
    }
}

/// A type that identifies samples that group multiple subsamples.
public final class HKCorrelationType: HKSampleType, @unchecked Sendable {
    /// Creates a correlation type for the specified identifier.
    public convenience init(_ identifier: HKCorrelationTypeIdentifier) {
        self.init(identifier: identifier.rawValue)
    }
}

/// The identifiers that create quantity type objects.
public struct HKQuantityTypeIdentifier: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let heartRate = Self("HKQuantityTypeIdentifierHeartRate")
    public static let stepCount = Self("HKQuantityTypeIdentifierStepCount")
    public static let oxygenSaturation = Self("HKQuantityTypeIdentifierOxygenSaturation")
    public static let bloodPressureSystolic = Self("HKQuantityTypeIdentifierBloodPressureSystolic")
    public static let bloodPressureDiastolic = Self("HKQuantityTypeIdentifierBloodPressureDiastolic")
    public static let basalBodyTemperature = Self("HKQuantityTypeIdentifierBasalBodyTemperature")
    public static let appleSleepingWristTemperature = Self("HKQuantityTypeIdentifierAppleSleepingWristTemperature")
}

/// The identifiers for category samples.
public struct HKCategoryTypeIdentifier: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let sleepAnalysis = Self("HKCategoryTypeIdentifierSleepAnalysis")
    public static let ovulationTestResult = Self("HKCategoryTypeIdentifierOvulationTestResult")
    public static let cervicalMucusQuality = Self("HKCategoryTypeIdentifierCervicalMucusQuality")
    public static let menstrualFlow = Self("HKCategoryTypeIdentifierMenstrualFlow")
}

/// The identifiers for the correlation types.
public struct HKCorrelationTypeIdentifier: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let bloodPressure = Self("HKCorrelationTypeIdentifierBloodPressure")
}

// MARK: Units and quantities

/// A class for managing the units of measure within HealthKit.
public final class HKUnit: NSObject, @unchecked Sendable {
    /// The unit's string, as HealthKit writes it (`count/min`, `mmHg`, `%`, `degC`).
    public let unitString: String
    /// The factor to the dimension's base unit, and the dimension.
    let factor: Double
    let dimension: String

    init(_ unitString: String, factor: Double, dimension: String) {
        self.unitString = unitString
        self.factor = factor
        self.dimension = dimension
    }

    /// Returns a unit for counting.
    public class func count() -> Self { unsafeDowncast(HKUnit("count", factor: 1, dimension: "count"), to: self) }
    /// Returns a unit for minutes.
    public class func minute() -> Self { unsafeDowncast(HKUnit("min", factor: 60, dimension: "time"), to: self) }
    /// Returns a unit for seconds.
    public class func second() -> Self { unsafeDowncast(HKUnit("s", factor: 1, dimension: "time"), to: self) }
    /// Returns a unit for percentages (0.97 is 97 %).
    public class func percent() -> Self { unsafeDowncast(HKUnit("%", factor: 1, dimension: "scalar"), to: self) }
    /// Returns a unit for measuring pressure in millimeters of mercury.
    public class func millimeterOfMercury() -> Self {
        unsafeDowncast(HKUnit("mmHg", factor: 133.322_387_415, dimension: "pressure"), to: self)
    }
    /// Returns a unit for measuring temperature in degrees Celsius.
    public class func degreeCelsius() -> Self {
        unsafeDowncast(HKUnit("degC", factor: 1, dimension: "temperature"), to: self)
    }

    /// Returns the unit that results from dividing this unit by the specified unit.
    public func unitDivided(by unit: HKUnit) -> HKUnit {
        HKUnit(
            unitString + "/" + unit.unitString, factor: factor / unit.factor,
            dimension: dimension + "/" + unit.dimension)
    }

    /// Whether values of the two units can be converted into each other.
    func isCompatible(with unit: HKUnit) -> Bool { dimension == unit.dimension }
}

/// An object that stores a value for a given unit.
public final class HKQuantity: NSObject, @unchecked Sendable {
    private let value: Double
    private let unit: HKUnit

    /// Instantiates and returns a new quantity object.
    public init(unit: HKUnit, doubleValue value: Double) {
        self.unit = unit
        self.value = value
    }

    /// Returns the quantity value converted to the provided unit; HealthKit raises an exception for an incompatible
    /// unit, and so does this shim.
    public func doubleValue(for unit: HKUnit) -> Double {
        precondition(
            self.unit.isCompatible(with: unit),
            "Attempt to convert incompatible units: \(self.unit.unitString), \(unit.unitString)")
        return self.unit.unitString == unit.unitString ? value : value * self.unit.factor / unit.factor
    }

    /// Returns a Boolean value that indicates whether the quantity is compatible with the provided unit.
    public func `is`(compatibleWith unit: HKUnit) -> Bool { self.unit.isCompatible(with: unit) }
}

// MARK: Objects and samples

/// An app or device that can create HealthKit data.
public final class HKSource: NSObject, @unchecked Sendable {
    /// The source's name.
    public let name: String
    /// The source's bundle identifier.
    public let bundleIdentifier: String

    init(name: String, bundleIdentifier: String) {
        self.name = name
        self.bundleIdentifier = bundleIdentifier
    }
}

/// A source of HealthKit data, with the version of the app or operating system that wrote it.
public final class HKSourceRevision: NSObject, @unchecked Sendable {
    /// The source of the HealthKit data.
    public let source: HKSource
    /// The version of the source property.
    public let version: String?

    /// Initializes a new source revision object with the provided source and version.
    public init(source: HKSource, version: String?) {
        self.source = source
        self.version = version
    }
}

/// A device that generates data for HealthKit.
public final class HKDevice: NSObject, @unchecked Sendable {
    public let name: String?
    public let manufacturer: String?
    public let model: String?
    public let hardwareVersion: String?
    public let firmwareVersion: String?
    public let softwareVersion: String?
    public let localIdentifier: String?
    public let udiDeviceIdentifier: String?

    /// Creates a new device object.
    public init(
        name: String?, manufacturer: String?, model: String?, hardwareVersion: String?, firmwareVersion: String?,
        softwareVersion: String?, localIdentifier: String?, udiDeviceIdentifier: String?
    ) {
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.hardwareVersion = hardwareVersion
        self.firmwareVersion = firmwareVersion
        self.softwareVersion = softwareVersion
        self.localIdentifier = localIdentifier
        self.udiDeviceIdentifier = udiDeviceIdentifier
    }
}

/// An abstract class that represents data in the HealthKit store.
open class HKObject: NSObject, @unchecked Sendable {
    /// The universally unique identifier (UUID) for this HealthKit object.
    public let uuid: UUID
    /// The metadata for this HealthKit object.
    public let metadata: [String: Any]?
    /// The device that generated the data for this object.
    public let device: HKDevice?
    /// The source revision for this object.
    public let sourceRevision: HKSourceRevision

    init(device: HKDevice?, metadata: [String: Any]?) {
        self.uuid = UUID()
        self.device = device
        self.metadata = metadata
        self.sourceRevision = HKSourceRevision(source: _HealthKitShim.writingSource(), version: "1.0")
    }
}

/// An abstract class that represents data in the HealthKit store with a start and end time.
open class HKSample: HKObject, @unchecked Sendable {
    /// The sample type.
    public let sampleType: HKSampleType
    /// The sample's start date.
    public let startDate: Date
    /// The sample's end date.
    public let endDate: Date

    init(type: HKSampleType, start: Date, end: Date, device: HKDevice?, metadata: [String: Any]?) {
        self.sampleType = type
        self.startDate = start
        self.endDate = end
        super.init(device: device, metadata: metadata)
    }
}

/// A sample that represents a quantity, including the value and the units.
open class HKQuantitySample: HKSample, @unchecked Sendable {
    /// The quantity for this sample.
    public let quantity: HKQuantity

    /// Creates a new quantity sample with the specified device and metadata.
    public init(
        type quantityType: HKQuantityType, quantity: HKQuantity, start startDate: Date, end endDate: Date,
        device: HKDevice?, metadata: [String: Any]?
    ) {
        self.quantity = quantity
        super.init(type: quantityType, start: startDate, end: endDate, device: device, metadata: metadata)
    }

    /// Creates a new quantity sample.
    public convenience init(
        type quantityType: HKQuantityType, quantity: HKQuantity, start startDate: Date, end endDate: Date
    ) {
        self.init(type: quantityType, quantity: quantity, start: startDate, end: endDate, device: nil, metadata: nil)
    }
}

/// A sample with a value from a short list of possible values.
public final class HKCategorySample: HKSample, @unchecked Sendable {
    /// The category value for this sample.
    public let value: Int

    /// Creates a new category sample with the specified device and metadata.
    public init(
        type: HKCategoryType, value: Int, start startDate: Date, end endDate: Date, device: HKDevice?,
        metadata: [String: Any]?
    ) {
        self.value = value
        super.init(type: type, start: startDate, end: endDate, device: device, metadata: metadata)
    }

    /// Creates a new category sample.
    public convenience init(type: HKCategoryType, value: Int, start startDate: Date, end endDate: Date) {
        self.init(type: type, value: value, start: startDate, end: endDate, device: nil, metadata: nil)
    }
}

/// A sample that groups multiple related samples into a single entry.
public final class HKCorrelation: HKSample, @unchecked Sendable {
    /// The set of samples that make up the correlation.
    public let objects: Set<HKSample>

    /// Creates a new correlation object with the specified device and metadata.
    public init(
        type correlationType: HKCorrelationType, start startDate: Date, end endDate: Date, objects: Set<HKSample>,
        device: HKDevice?, metadata: [String: Any]?
    ) {
        self.objects = objects
        super.init(type: correlationType, start: startDate, end: endDate, device: device, metadata: metadata)
    }

    /// Creates a new correlation object.
    public convenience init(
        type correlationType: HKCorrelationType, start startDate: Date, end endDate: Date, objects: Set<HKSample>
    ) {
        self.init(type: correlationType, start: startDate, end: endDate, objects: objects, device: nil, metadata: nil)
    }

    /// Returns the set of samples in the correlation that match the specified type.
    public func objects(for objectType: HKObjectType) -> Set<HKSample> {
        objects.filter { $0.sampleType == objectType }
    }
}

/// A sample that has been deleted from the HealthKit store.
public final class HKDeletedObject: NSObject, @unchecked Sendable {
    /// The universally unique identifier (UUID) for the deleted HealthKit object.
    public let uuid: UUID
    /// The metadata for the deleted object.
    public let metadata: [String: Any]?

    init(uuid: UUID, metadata: [String: Any]?) {
        self.uuid = uuid
        self.metadata = metadata
    }
}

/// An object used to identify all the samples previously returned by an anchored object query.
public final class HKQueryAnchor: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// The position in the store's history of changes this anchor stands for.
    let position: Int

    init(position: Int) {
        self.position = position
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(position, forKey: "HKQueryAnchorPosition")
    }

    public init?(coder: NSCoder) {
        position = coder.decodeInteger(forKey: "HKQueryAnchorPosition")
    }

    public func copy(with zone: NSZone? = nil) -> Any { HKQueryAnchor(position: position) }

    public override func isEqual(_ object: Any?) -> Bool { (object as? HKQueryAnchor)?.position == position }
    public override var hash: Int { position }
}

// MARK: Queries

/// An abstract class for all the query classes in HealthKit.
open class HKQuery: NSObject, @unchecked Sendable {
    /// Returns a predicate for samples whose start and end dates fall within the specified time interval.
    public class func predicateForSamples(
        withStart startDate: Date?, end endDate: Date?, options: HKQueryOptions = []
    ) -> NSPredicate {
        NSPredicate { object, _ in
            guard let sample = object as? HKSample else { return false }
            if options.contains(.strictStartDate), let startDate, sample.startDate < startDate { return false }
            if options.contains(.strictEndDate), let endDate, sample.endDate > endDate { return false }
            // Without the strict options, a sample matches when it overlaps the interval.
            if let startDate, sample.endDate < startDate { return false }
            if let endDate, sample.startDate >= endDate { return false }
            return true
        }
    }
}

/// Options for filtering samples based on their start and end times.
public struct HKQueryOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The sample's start time must fall within the target time period.
    public static let strictStartDate = HKQueryOptions(rawValue: 1 << 0)
    /// The sample's end time must fall within the target time period.
    public static let strictEndDate = HKQueryOptions(rawValue: 1 << 1)
}

/// A predicate for queries that return a collection of matching sample objects.
public struct HKSamplePredicate<Sample>: @unchecked Sendable where Sample: HKSample {
    /// The type of data that the predicate matches.
    public let sampleType: HKSampleType
    /// An optional predicate that further restricts the results that the query returns.
    nonisolated(unsafe) public let nsPredicate: NSPredicate?

    init(sampleType: HKSampleType, nsPredicate: NSPredicate?) {
        self.sampleType = sampleType
        self.nsPredicate = nsPredicate
    }

    func matches(_ sample: HKSample) -> Bool {
        sample.sampleType == sampleType && (nsPredicate?.evaluate(with: sample) ?? true)
    }
}

extension HKSamplePredicate {
    /// Returns a sample predicate that matches samples.
    public static func sample(
        type sampleType: HKSampleType, predicate: NSPredicate? = nil
    ) -> HKSamplePredicate<HKSample> {
        HKSamplePredicate<HKSample>(sampleType: sampleType, nsPredicate: predicate)
    }

    /// Returns a sample predicate that matches quantity samples.
    public static func quantitySample(
        type quantityType: HKQuantityType, predicate: NSPredicate? = nil
    ) -> HKSamplePredicate<HKQuantitySample> {
        HKSamplePredicate<HKQuantitySample>(sampleType: quantityType, nsPredicate: predicate)
    }

    /// Returns a sample predicate that matches category samples.
    public static func categorySample(
        type categoryType: HKCategoryType, predicate: NSPredicate? = nil
    ) -> HKSamplePredicate<HKCategorySample> {
        HKSamplePredicate<HKCategorySample>(sampleType: categoryType, nsPredicate: predicate)
    }

    /// Returns a sample predicate that matches correlation samples.
    public static func correlation(
        type correlationType: HKCorrelationType, predicate: NSPredicate? = nil
    ) -> HKSamplePredicate<HKCorrelation> {
        HKSamplePredicate<HKCorrelation>(sampleType: correlationType, nsPredicate: predicate)
    }
}

/// A query interface that reads samples using Swift concurrency.
public struct HKSampleQueryDescriptor<Sample>: @unchecked Sendable where Sample: HKSample {
    /// An array of sample predicates that define the type of data that the query returns.
    public var predicates: [HKSamplePredicate<Sample>]
    /// An array of sort descriptors that specify the order of the results returned by this query.
    public var sortDescriptors: [SortDescriptor<Sample>]
    /// The maximum number of samples that the query returns.
    public var limit: Int?

    /// Creates a sample query descriptor.
    public init(predicates: [HKSamplePredicate<Sample>], sortDescriptors: [SortDescriptor<Sample>], limit: Int? = nil) {
        self.predicates = predicates
        self.sortDescriptors = sortDescriptors
        self.limit = limit
    }

    /// Runs a one-shot query and asynchronously returns a snapshot of the current matching results.
    public func result(for healthStore: HKHealthStore) async throws -> [Sample] {
        try healthStore.script.withLock { try $0.check() }
        let present = healthStore.script.withLock { $0.present }
        var matching = present.compactMap { sample in
            predicates.contains { $0.matches(sample) } ? sample as? Sample : nil
        }
        matching.sort(using: sortDescriptors)
        return limit.map { Array(matching.prefix($0)) } ?? matching
    }
}

/// A query interface that runs anchored object queries using Swift concurrency.
public struct HKAnchoredObjectQueryDescriptor<Sample>: @unchecked Sendable where Sample: HKSample {
    /// A set of results from an anchored object query.
    public struct Result: @unchecked Sendable {
        /// An array containing the matching samples added to the HealthKit store.
        public let addedSamples: [Sample]
        /// An array of objects deleted from the HealthKit store.
        public let deletedObjects: [HKDeletedObject]
        /// A value corresponding to the last sample that the anchor query has returned.
        public let newAnchor: HKQueryAnchor
    }

    /// An array of sample predicates that define the type of data that the query returns.
    public var predicates: [HKSamplePredicate<Sample>]
    /// An anchor that a previous anchored object query returned.
    public var anchor: HKQueryAnchor?
    /// The maximum number of samples and deleted objects that the query returns.
    public var limit: Int?

    /// Creates an anchored object query descriptor.
    public init(predicates: [HKSamplePredicate<Sample>], anchor: HKQueryAnchor?, limit: Int? = nil) {
        self.predicates = predicates
        self.anchor = anchor
        self.limit = limit
    }

    /// Runs a one-shot query and asynchronously returns a snapshot of the current matching results.
    public func result(for healthStore: HKHealthStore) async throws -> Result {
        try healthStore.script.withLock { try $0.check() }
        let history = healthStore.script.withLock { $0.history }
        let start = anchor?.position ?? 0
        var added: [Sample] = []
        var deleted: [HKDeletedObject] = []
        var last = start
        for (offset, change) in history.enumerated() where offset + 1 > start {
            if let limit, added.count + deleted.count >= limit { break }
            switch change {
            case .added(let sample):
                guard predicates.contains(where: { $0.matches(sample) }) else { break }
                // A sample deleted since it was added is not returned: its deletion is, further on.
                if history[(offset + 1)...].contains(where: { $0.deletes(sample.uuid) }) { break }
                guard let sample = sample as? Sample else { break }
                added.append(sample)
            case .deleted(let object, let type):
                guard predicates.contains(where: { $0.sampleType == type }) else { break }
                deleted.append(object)
            }
            last = offset + 1
        }
        // A read that reached the end of the history leaves the anchor there.
        if limit == nil || added.count + deleted.count < limit! { last = history.count }
        return Result(
            addedSamples: added, deletedObjects: deleted, newAnchor: HKQueryAnchor(position: max(last, start)))
    }
}

// MARK: The store

/// Values that indicate whether your app needs to request authorization from the user.
public enum HKAuthorizationRequestStatus: Int, Sendable {
    /// The authorization request status could not be determined because an error occurred.
    case unknown = 0
    /// The application has not yet requested authorization for all the specified data types.
    case shouldRequest = 1
    /// The application has already requested authorization for all the specified data types.
    case unnecessary = 2
}

/// The access point for all data managed by HealthKit.
public final class HKHealthStore: NSObject, @unchecked Sendable {
    let script = Mutex(_HealthKitShim.Store())

    public override init() {}

    /// Returns a Boolean value that indicates whether HealthKit is available on this device.
    public class func isHealthDataAvailable() -> Bool { _HealthKitShim.available.withLock { $0 } }

    /// Requests permission to save and read the specified data types.
    public func requestAuthorization(
        toShare typesToShare: Set<HKSampleType>?, read typesToRead: Set<HKObjectType>?,
        completion: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        do {
            let types = (typesToShare ?? []).map { $0 as HKObjectType } + Array(typesToRead ?? [])
            // HealthKit refuses to ask for a correlation type itself (its member quantities are asked instead).
            if let correlation = types.first(where: { $0 is HKCorrelationType }) {
                throw CocoaError(
                    .featureUnsupported,
                    userInfo: [
                        NSLocalizedDescriptionKey: "Authorization to read \(correlation.identifier) is disallowed"
                    ])
            }
            try script.withLock { store in
                try store.check()
                store.prompts += 1
                store.requested.formUnion(typesToShare ?? [])
                store.requested.formUnion(typesToRead ?? [])
            }
            completion(true, nil)
        } catch {
            completion(false, error)
        }
    }

    /// Asynchronously requests permission to save and read the specified data types.
    public func requestAuthorization(
        toShare typesToShare: Set<HKSampleType>, read typesToRead: Set<HKObjectType>
    ) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            requestAuthorization(toShare: Optional(typesToShare), read: Optional(typesToRead)) { _, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// Indicates whether the system presents the user with a permission sheet if your app requests authorization for
    /// the provided types.
    public func getRequestStatusForAuthorization(
        toShare typesToShare: Set<HKSampleType>, read typesToRead: Set<HKObjectType>,
        completion: @escaping @Sendable (HKAuthorizationRequestStatus, (any Error)?) -> Void
    ) {
        do {
            let asked = try script.withLock { store in
                try store.check()
                return store.requested.isSuperset(of: typesToRead.union(typesToShare.map { $0 as HKObjectType }))
            }
            completion(asked ? .unnecessary : .shouldRequest, nil)
        } catch {
            completion(.unknown, error)
        }
    }

    /// Asynchronously indicates whether the system presents the user with a permission sheet for the provided types.
    public func statusForAuthorizationRequest(
        toShare typesToShare: Set<HKSampleType>, read typesToRead: Set<HKObjectType>
    ) async throws -> HKAuthorizationRequestStatus {
        try await withCheckedThrowingContinuation { continuation in
            getRequestStatusForAuthorization(toShare: typesToShare, read: typesToRead) { status, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: status) }
            }
        }
    }
}

// MARK: Scripted behaviour (tests only)

/// A store's history of added and deleted samples, its authorization prompts and an error forced on its next call,
/// for AppleAdapterTests.
public enum _HealthKitShim {
    static let available = Mutex(true)
    static let source = Mutex("com.example.fitness")

    /// The bundle identifier of the app that writes the samples made from now on.
    public static func setWritingApp(_ bundleIdentifier: String) { source.withLock { $0 = bundleIdentifier } }

    static func writingSource() -> HKSource {
        let bundle = source.withLock { $0 }
        return HKSource(name: bundle, bundleIdentifier: bundle)
    }

    /// Whether `HKHealthStore.isHealthDataAvailable()` answers yes.
    public static func setAvailable(_ value: Bool) { available.withLock { $0 = value } }

    /// Saves `samples` in `store`, in order, after what it holds.
    public static func add(_ samples: [HKSample], to store: HKHealthStore) {
        store.script.withLock { $0.history += samples.map { .added($0) } }
    }

    /// Deletes `sample` from `store` (it is then reported among the deleted objects).
    public static func delete(_ sample: HKSample, from store: HKHealthStore) {
        store.script.withLock {
            $0.history.append(
                .deleted(HKDeletedObject(uuid: sample.uuid, metadata: sample.metadata), sample.sampleType))
        }
    }

    /// The next call to `store` fails with `error`.
    public static func failNextCall(of store: HKHealthStore, with error: any Error) {
        store.script.withLock { $0.failure = error }
    }

    /// How many times `store` showed the authorization sheet, and the types it asked for so far.
    public static func authorizationPrompts(of store: HKHealthStore) -> (count: Int, types: Set<HKObjectType>) {
        store.script.withLock { ($0.prompts, $0.requested) }
    }

    struct Store: @unchecked Sendable {
        enum Change {
            case added(HKSample)
            case deleted(HKDeletedObject, HKSampleType)

            func deletes(_ uuid: UUID) -> Bool {
                if case .deleted(let object, _) = self { return object.uuid == uuid }
                return false
            }
        }

        var history: [Change] = []
        var requested: Set<HKObjectType> = []
        var prompts = 0
        var failure: (any Error)?

        mutating func check() throws {
            if let failure {
                self.failure = nil
                throw failure
            }
        }

        /// The samples in the store now.
        var present: [HKSample] {
            history.compactMap { change in
                guard case .added(let sample) = change, !history.contains(where: { $0.deletes(sample.uuid) }) else {
                    return nil
                }
                return sample
            }
        }
    }
}

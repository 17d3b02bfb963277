#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A kind of health measurement, as HealthKit names it.
public enum HealthSampleType: String, Sendable, Codable, CaseIterable {
    case heartRate, steps, sleep, oxygenSaturation, bloodPressure

    /// The canonical unit values are stored in: `count/min`, `count`, none for sleep, `%`, `mmHg`.
    public var canonicalUnit: String? {
        switch self {
        case .heartRate: "count/min"
        case .steps: "count"
        case .sleep: nil
        case .oxygenSaturation: "%"
        case .bloodPressure: "mmHg"
        }
    }
}

/// HealthKit's sleepAnalysis stages (JSON dictionary keys too, so per-stage totals encode as an object).
public enum SleepStage: String, Sendable, Codable, CodingKeyRepresentable, CaseIterable {
    case inBed, awake, asleepUnspecified, asleepCore, asleepDeep, asleepREM

    /// Whether the stage is one of the asleep* stages (not inBed or awake).
    public var isAsleep: Bool {
        switch self {
        case .inBed, .awake: false
        case .asleepUnspecified, .asleepCore, .asleepDeep, .asleepREM: true
        }
    }
}

/// A sample's measured value, in the canonical unit (on the wire, fields of its ``HealthSample``).
public enum HealthValue: Sendable, Equatable, Hashable {
    case heartRate(beatsPerMinute: Double)
    case steps(count: Double)
    case sleep(stage: SleepStage)
    case oxygenSaturation(percent: Double)
    case bloodPressure(systolic: Double, diastolic: Double)

    /// The kind of measurement this value is.
    public var type: HealthSampleType {
        switch self {
        case .heartRate: .heartRate
        case .steps: .steps
        case .sleep: .sleep
        case .oxygenSaturation: .oxygenSaturation
        case .bloodPressure: .bloodPressure
        }
    }
}

/// One stored sample (the `id` is HealthKit's sample UUID). Its JSON is the contract's `HealthSample`: the value's
/// numbers (`value`, or `systolic` and `diastolic`) or sleep `stage` beside `type`, in the canonical `unit`.
public struct HealthSample: Sendable, Equatable, Codable, Hashable {
    /// HealthKit's sample UUID, so re-uploads of the same sample are recognisable.
    public var id: HealthSampleID
    /// The measured value in the canonical unit.
    public var value: HealthValue
    /// When the measurement was taken, or the interval began.
    public var start: Date
    /// When the interval ended; required for steps and sleep.
    public var end: Date?
    /// The app or device source that recorded the sample (HealthKit's source bundle identifier).
    public var sourceId: String
    /// The device model, when known.
    public var device: String?
    /// Free-form HealthKit metadata, stringified.
    public var metadata: [String: String]?

    /// The kind of measurement, derived from `value`.
    public var type: HealthSampleType { value.type }

    /// A sample from its parts; does not validate (see `HealthSampleValidator`).
    public init(
        id: HealthSampleID, value: HealthValue, start: Date, end: Date? = nil, sourceId: String, device: String? = nil,
        metadata: [String: String]? = nil
    ) {
        self.id = id
        self.value = value
        self.start = start
        self.end = end
        self.sourceId = sourceId
        self.device = device
        self.metadata = metadata
    }
}

extension HealthSample {
    private enum CodingKeys: String, CodingKey {
        case id, type, value, unit, systolic, diastolic, stage, start, end, sourceId, device, metadata
    }

    /// Reads the contract's `HealthSample`. A type this version does not know, a missing number or stage, or a unit
    /// other than the type's canonical one fails to decode: a sample is never read with a value it was not given.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(HealthSampleType.self, forKey: .type)
        if let unit = try container.decodeIfPresent(String.self, forKey: .unit), unit != type.canonicalUnit {
            let expected = type.canonicalUnit.map { "must be \($0)" } ?? "must be absent"
            throw DecodingError.dataCorruptedError(forKey: .unit, in: container, debugDescription: "\(expected) for \(type.rawValue)")
        }
        let value: HealthValue =
            switch type {
            case .heartRate: .heartRate(beatsPerMinute: try container.decode(Double.self, forKey: .value))
            case .steps: .steps(count: try container.decode(Double.self, forKey: .value))
            case .oxygenSaturation: .oxygenSaturation(percent: try container.decode(Double.self, forKey: .value))
            case .sleep: .sleep(stage: try container.decode(SleepStage.self, forKey: .stage))
            case .bloodPressure:
                .bloodPressure(
                    systolic: try container.decode(Double.self, forKey: .systolic),
                    diastolic: try container.decode(Double.self, forKey: .diastolic))
            }
        self.init(
            id: try container.decode(HealthSampleID.self, forKey: .id), value: value, start: try container.decode(Date.self, forKey: .start),
            end: try container.decodeIfPresent(Date.self, forKey: .end), sourceId: try container.decode(String.self, forKey: .sourceId),
            device: try container.decodeIfPresent(String.self, forKey: .device),
            metadata: try container.decodeIfPresent([String: String].self, forKey: .metadata))
    }

    /// Writes the contract's `HealthSample`, with the type's canonical unit.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        switch value {
        case .heartRate(let number), .steps(let number), .oxygenSaturation(let number): try container.encode(number, forKey: .value)
        case .sleep(let stage): try container.encode(stage, forKey: .stage)
        case .bloodPressure(let systolic, let diastolic):
            try container.encode(systolic, forKey: .systolic)
            try container.encode(diastolic, forKey: .diastolic)
        }
        try container.encodeIfPresent(type.canonicalUnit, forKey: .unit)
        try container.encode(start, forKey: .start)
        try container.encodeIfPresent(end, forKey: .end)
        try container.encode(sourceId, forKey: .sourceId)
        try container.encodeIfPresent(device, forKey: .device)
        try container.encodeIfPresent(metadata, forKey: .metadata)
    }
}

/// A sample as a client sends it, before validation (field names match the wire).
public struct HealthSampleInput: Sendable, Equatable {
    /// The sample's UUID, in any letter case.
    public var id: String
    /// A `HealthSampleType` raw value.
    public var type: String
    /// The measured quantity (all types but bloodPressure and sleep).
    public var value: Double?
    /// The unit of `value` (or of `systolic`/`diastolic`).
    public var unit: String?
    /// Blood pressure's upper number.
    public var systolic: Double?
    /// Blood pressure's lower number.
    public var diastolic: Double?
    /// A `SleepStage` raw value (sleep only).
    public var stage: String?
    /// When the measurement was taken, or the interval began.
    public var start: Date
    /// When the interval ended.
    public var end: Date?
    /// The recording app or device source.
    public var sourceId: String
    /// The device model.
    public var device: String?
    /// Free-form metadata.
    public var metadata: [String: String]?

    /// An input from its wire fields.
    public init(
        id: String, type: String, value: Double? = nil, unit: String? = nil, systolic: Double? = nil,
        diastolic: Double? = nil, stage: String? = nil, start: Date, end: Date? = nil, sourceId: String,
        device: String? = nil, metadata: [String: String]? = nil
    ) {
        self.id = id
        self.type = type
        self.value = value
        self.unit = unit
        self.systolic = systolic
        self.diastolic = diastolic
        self.stage = stage
        self.start = start
        self.end = end
        self.sourceId = sourceId
        self.device = device
        self.metadata = metadata
    }
}

/// Checks a sample and converts it to the canonical unit.
///
/// Rules (every broken rule is reported, each on its field):
/// * `id` is a UUID in any letter case; `type` a `HealthSampleType` raw value; `sourceId` 1 to 200 characters;
///   `device` at most 200; `metadata` at most 20 keys of 1 to 64 characters with values of at most 500.
/// * `start` is not after `now` + 5 minutes and not before 2000-01-01; `end`, when present, is not before `start`
///   and at most 24 hours after it. Steps and sleep require `end`; sleep also requires `end` after `start`.
/// * Units match case-insensitively; an absent or empty unit means the canonical one.
///   heartRate: `value` in count/min, bpm, /min, or count/s, Hz (× 60); 20 to 300 count/min.
///   steps: `value` in count; 0 to 100,000 and at most 20 steps per second over the interval.
///   oxygenSaturation: `value` in % (HealthKit stores fractions: a value ≤ 1 is a fraction, × 100) or fraction, 1
///   (× 100); 50 to 100 %.
///   bloodPressure: `systolic` and `diastolic` in mmHg or kPa (× 7.50062); systolic 50 to 300, diastolic 20 to 200,
///   diastolic below systolic. sleep: `stage` a `SleepStage` raw value and no unit.
/// * Non-finite numbers are refused; fields a type does not use (`value` for blood pressure, `stage` for heart
///   rate, …) are ignored.
public enum HealthSampleValidator {
    private static let futureTolerance: TimeInterval = 5 * 60
    private static let maximumDuration: TimeInterval = 24 * 60 * 60
    private static let earliestStart = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01T00:00:00Z

    /// The sample, or every invalid field at once.
    public static func validate(_ input: HealthSampleInput, now: Date) -> Result<HealthSample, InvalidFields> {
        var errors: [FieldError] = []
        let id = HealthSampleID(input.id)
        if id == nil { errors.add("id", "must be a UUID") }
        let type = HealthSampleType(rawValue: input.type)
        if type == nil {
            errors.add("type", "must be one of " + HealthSampleType.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let value = type.flatMap { measure(input, as: $0, errors: &errors) }
        checkInterval(input, type: type, now: now, errors: &errors)
        checkText(input, errors: &errors)
        guard errors.isEmpty, let id, let value else { return .failure(InvalidFields(errors)) }
        return .success(
            HealthSample(
                id: id, value: value, start: input.start, end: input.end, sourceId: input.sourceId,
                device: input.device, metadata: input.metadata))
    }

    /// How a unit converts to the canonical unit.
    private enum Conversion {
        case scale(Double)
        /// HealthKit's `%` unit holds fractions, but people send percentages: a value ≤ 1 is a fraction.
        case percentOrFraction

        func apply(_ value: Double) -> Double {
            switch self {
            case .scale(let factor): value * factor
            case .percentOrFraction: value <= 1 ? value * 100 : value
            }
        }
    }

    /// Accepted unit spellings per type, canonical first.
    private static func units(for type: HealthSampleType) -> [(name: String, conversion: Conversion)] {
        switch type {
        case .heartRate:
            [
                ("count/min", .scale(1)), ("bpm", .scale(1)), ("/min", .scale(1)), ("count/s", .scale(60)),
                ("Hz", .scale(60)),
            ]
        case .steps: [("count", .scale(1))]
        case .oxygenSaturation: [("%", .percentOrFraction), ("fraction", .scale(100)), ("1", .scale(100))]
        case .bloodPressure: [("mmHg", .scale(1)), ("kPa", .scale(7.50062))]
        case .sleep: []
        }
    }

    /// The conversion for the input's unit; nil, with an error on "unit", when the type does not accept it.
    private static func conversion(_ unit: String?, for type: HealthSampleType, errors: inout [FieldError])
        -> Conversion?
    {
        let accepted = units(for: type)
        guard let unit, !unit.isEmpty else { return accepted.first?.conversion }
        if let match = accepted.first(where: { $0.name.lowercased() == unit.lowercased() }) { return match.conversion }
        if accepted.isEmpty {
            errors.add("unit", "must be absent for \(type.rawValue)")
        } else {
            errors.add("unit", "must be one of " + accepted.map(\.name).joined(separator: ", "))
        }
        return nil
    }

    /// The converted number of `field`, nil (with errors noted) when it is missing, not finite, or out of `range`.
    private static func quantity(
        _ raw: Double?, field: String, of type: HealthSampleType, conversion: Conversion?,
        range: ClosedRange<Double>, rangeText: String, errors: inout [FieldError]
    ) -> Double? {
        guard let raw else {
            errors.add(field, "is required for \(type.rawValue)")
            return nil
        }
        guard raw.isFinite else {
            errors.add(field, "must be a finite number")
            return nil
        }
        guard let converted = conversion?.apply(raw) else { return nil }
        guard range.contains(converted) else {
            errors.add(field, "must be between \(rangeText)")
            return nil
        }
        return converted
    }

    private static func measure(_ input: HealthSampleInput, as type: HealthSampleType, errors: inout [FieldError])
        -> HealthValue?
    {
        let unit = conversion(input.unit, for: type, errors: &errors)
        func number(_ raw: Double?, _ field: String, _ range: ClosedRange<Double>, _ text: String) -> Double? {
            quantity(raw, field: field, of: type, conversion: unit, range: range, rangeText: text, errors: &errors)
        }
        switch type {
        case .heartRate:
            return number(input.value, "value", 20...300, "20 and 300 count/min").map { .heartRate(beatsPerMinute: $0) }
        case .steps:
            guard let count = number(input.value, "value", 0...100_000, "0 and 100,000 steps") else { return nil }
            if let end = input.end, end > input.start, count / end.timeIntervalSince(input.start) > 20 {
                errors.add("value", "must be at most 20 steps per second over the sample's interval")
                return nil
            }
            return .steps(count: count)
        case .oxygenSaturation:
            return number(input.value, "value", 50...100, "50 and 100 % (0.5 and 1 as a fraction)")
                .map { .oxygenSaturation(percent: $0) }
        case .bloodPressure:
            let systolic = number(input.systolic, "systolic", 50...300, "50 and 300 mmHg")
            let diastolic = number(input.diastolic, "diastolic", 20...200, "20 and 200 mmHg")
            guard let systolic, let diastolic else { return nil }
            guard diastolic < systolic else {
                errors.add("diastolic", "must be below systolic")
                return nil
            }
            return .bloodPressure(systolic: systolic, diastolic: diastolic)
        case .sleep:
            guard let text = input.stage, let stage = SleepStage(rawValue: text) else {
                let stages = SleepStage.allCases.map(\.rawValue).joined(separator: ", ")
                errors.add("stage", input.stage == nil ? "is required for sleep" : "must be one of \(stages)")
                return nil
            }
            return .sleep(stage: stage)
        }
    }

    static func checkInterval(
        _ input: HealthSampleInput, type: HealthSampleType?, now: Date, errors: inout [FieldError]
    ) {
        if input.start > now.addingTimeInterval(futureTolerance) {
            errors.add("start", "must not be in the future")
        } else if input.start < earliestStart {
            errors.add("start", "must not be before 2000-01-01")
        }
        guard let end = input.end else {
            if let type, type == .steps || type == .sleep { errors.add("end", "is required for \(type.rawValue)") }
            return
        }
        let duration = end.timeIntervalSince(input.start)
        if duration < 0 {
            errors.add("end", "must not be before start")
        } else if duration == 0, type == .sleep {
            errors.add("end", "must be after start for sleep")
        } else if duration > maximumDuration, type != nil {
            errors.add("end", "must be at most 24 hours after start")
        }
    }

    private static let metadataKeys = 20
    private static let metadataKeyLength = 1...64
    private static let metadataValueLength = 500

    static func checkText(_ input: HealthSampleInput, errors: inout [FieldError]) {
        if !(1...200).contains(input.sourceId.count) { errors.add("sourceId", "must be 1 to 200 characters") }
        if let device = input.device, device.count > 200 { errors.add("device", "must be at most 200 characters") }
        guard let metadata = input.metadata else { return }
        if metadata.count > metadataKeys { errors.add("metadata", "must have at most 20 keys") }
        if metadata.keys.contains(where: { !metadataKeyLength.contains($0.count) }) {
            errors.add("metadata", "keys must be 1 to 64 characters")
        }
        if metadata.values.contains(where: { $0.count > metadataValueLength }) {
            errors.add("metadata", "values must be at most 500 characters")
        }
    }

    /// Metadata cut to what a sample may carry, so a reading with much metadata (HealthKit's can be long) is stored
    /// rather than refused: keys of a valid length only, the first 20 of them in key order, values cut to 500
    /// characters; `nil` when nothing is left.
    public static func fitting(metadata: [String: String]) -> [String: String]? {
        let kept = metadata.filter { metadataKeyLength.contains($0.key.count) }.sorted { $0.key < $1.key }.prefix(metadataKeys)
        guard !kept.isEmpty else { return nil }
        return Dictionary(uniqueKeysWithValues: kept.map { ($0.key, String($0.value.prefix(metadataValueLength))) })
    }
}

extension [FieldError] {
    fileprivate mutating func add(_ field: String, _ message: String) {
        append(FieldError(field: field, message: message))
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The tag of ``FertilitySignalID``.
public enum FertilitySignalTag {}
/// Identifies a logged fertility signal.
public typealias FertilitySignalID = Identifier<FertilitySignalTag>

/// What a fertility signal measures (the contract's `FertilitySignalType`).
public enum FertilitySignalType: String, Sendable, Hashable, Codable, CaseIterable {
    /// A urine LH test strip: ``LHTestResult``.
    case lhTest
    /// Basal body temperature on waking, in °C.
    case basalBodyTemperature
    /// Cervical mucus on the four-level scale of ``CervicalMucus``.
    case cervicalMucus
    /// A night's sleeping wrist temperature as its deviation from the user's baseline, in °C (as Apple Watch reports it).
    case wristTemperature
}

/// The result of an LH test strip.
public enum LHTestResult: String, Sendable, Hashable, Codable, CaseIterable {
    case positive, negative, indeterminate
}

/// Cervical mucus on the usual four-level scale, least to most fertile (the Billings and Creighton observations;
/// HealthKit's `watery` is counted as `eggWhite`, both being the most fertile quality).
public enum CervicalMucus: String, Sendable, Hashable, Codable, CaseIterable {
    case dry, sticky, creamy, eggWhite
}

/// One observation that says something about ovulation, on one of the user's local days.
public struct FertilitySignal: Sendable, Hashable, Identifiable {
    /// What was observed.
    public enum Reading: Sendable, Hashable {
        case lhTest(LHTestResult)
        /// Degrees Celsius.
        case basalBodyTemperature(celsius: Double)
        case cervicalMucus(CervicalMucus)
        /// Degrees Celsius above (or below, negative) the user's baseline.
        case wristTemperature(deviationCelsius: Double)

        /// The reading's type.
        public var type: FertilitySignalType {
            switch self {
            case .lhTest: .lhTest
            case .basalBodyTemperature: .basalBodyTemperature
            case .cervicalMucus: .cervicalMucus
            case .wristTemperature: .wristTemperature
            }
        }
    }

    /// Made on the device, so a signal can be logged offline.
    public var id: FertilitySignalID
    /// The day it was observed, in the user's time zone.
    public var date: CalendarDay
    public var reading: Reading

    /// A signal from its fields; a new one gets a fresh id.
    public init(id: FertilitySignalID = FertilitySignalID(), date: CalendarDay, reading: Reading) {
        self.id = id
        self.date = date
        self.reading = reading
    }

    /// The reading's type.
    public var type: FertilitySignalType { reading.type }
}

extension FertilitySignal: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, date, type, result, value, unit
    }

    /// Decodes the API's form: `{id, date, type, result?, value?, unit?}` (values in °C).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(FertilitySignalID.self, forKey: .id)
        let date = try container.decode(CalendarDay.self, forKey: .date)
        let draft = FertilitySignalDraft(
            date: date.description, type: try container.decode(String.self, forKey: .type),
            result: try container.decodeIfPresent(String.self, forKey: .result), value: try container.decodeIfPresent(Double.self, forKey: .value),
            unit: try container.decodeIfPresent(String.self, forKey: .unit)
        )
        do {
            self = try FertilitySignalRules.checked(draft, id: id, today: date)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: error.errors.map { "\($0.field) \($0.message)" }.joined(separator: "; "))
        }
    }

    /// Encodes the API's form: temperatures in °C with `unit: "celsius"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(date, forKey: .date)
        try container.encode(type, forKey: .type)
        try container.encodeIfPresent(result, forKey: .result)
        try container.encodeIfPresent(celsius, forKey: .value)
        if celsius != nil { try container.encode(TemperatureUnit.celsius, forKey: .unit) }
    }

    /// The LH result or mucus level as the API writes it.
    public var result: String? {
        switch reading {
        case .lhTest(let result): result.rawValue
        case .cervicalMucus(let mucus): mucus.rawValue
        case .basalBodyTemperature, .wristTemperature: nil
        }
    }

    /// The temperature or deviation in °C.
    public var celsius: Double? {
        switch reading {
        case .basalBodyTemperature(let celsius): celsius
        case .wristTemperature(let deviation): deviation
        case .lhTest, .cervicalMucus: nil
        }
    }
}

/// The unit a temperature is written in.
public enum TemperatureUnit: String, Sendable, Hashable, Codable, CaseIterable {
    case celsius, fahrenheit
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HealthKit's cycle samples as they come through the health upload (`POST /v1/health/samples`), beside heart rate,
/// steps and the rest: an app that syncs HealthKit sends them with its other samples, and they become fertility
/// signals and periods (``HealthKitCycleImport``) instead of health samples.
///
/// The upload's `type` names (with the HealthKit identifier each stands for) and their rules:
/// * `ovulationTestResult` (`HKCategoryTypeIdentifierOvulationTestResult`): `value` the category's raw value, 1–4.
/// * `cervicalMucusQuality` (`HKCategoryTypeIdentifierCervicalMucusQuality`): `value` 1–5.
/// * `menstrualFlow` (`HKCategoryTypeIdentifierMenstrualFlow`): `value` 1–5 (5 is "none", read and skipped).
/// * `basalBodyTemperature` (`HKQuantityTypeIdentifierBasalBodyTemperature`): `value` in `degC` (the default) or
///   `degF`, 35.0–38.5 °C.
/// * `sleepingWristTemperature` (`HKQuantityTypeIdentifierAppleSleepingWristTemperature`): the night's wrist
///   temperature in `degC` or `degF`, 30.0–42.0 °C. Its deviation is taken from the median of the earlier nights in the
///   same upload (``HealthKitCycleImport/signals(_:)``): send the 30 nights before the new ones with them.
///
/// Category types take no unit. `id`, `start` (whose day in the user's time zone is the sample's day), `sourceId`,
/// `device` and `metadata` follow the health upload's rules (``HealthSampleValidator``); nothing but the day and the
/// value is kept.
public enum HealthKitCycleKind: String, Sendable, Hashable, Codable, CaseIterable {
    case ovulationTestResult, cervicalMucusQuality, menstrualFlow, basalBodyTemperature, sleepingWristTemperature

    /// The HealthKit type identifier it stands for.
    public var identifier: String {
        switch self {
        case .ovulationTestResult: HealthKitCycleImport.ovulationTestResult
        case .cervicalMucusQuality: HealthKitCycleImport.cervicalMucusQuality
        case .menstrualFlow: HealthKitCycleImport.menstrualFlow
        case .basalBodyTemperature: HealthKitCycleImport.basalBodyTemperature
        case .sleepingWristTemperature: HealthKitCycleImport.sleepingWristTemperature
        }
    }

    /// Whether the sample is a temperature (`value` in `degC` or `degF`) rather than a category's raw value.
    public var isTemperature: Bool { self == .basalBodyTemperature || self == .sleepingWristTemperature }
}

extension HealthKitCycleImport {
    /// The health upload's names of the types it takes (``HealthKitCycleKind``), each with its HealthKit identifier.
    public static let uploadTypes: [String: String] = Dictionary(uniqueKeysWithValues: HealthKitCycleKind.allCases.map { ($0.rawValue, $0.identifier) })

    /// The plausible nightly wrist temperatures, in °C.
    public static let wristTemperatureRange = 30.0...42.0

    /// The sample a health-upload `input` of one of ``uploadTypes`` describes, on the day `day` gives its start, or every
    /// broken rule (fields named as the health upload names them).
    public static func validate(_ input: HealthSampleInput, now: Date, day: (Date) -> CalendarDay) -> Result<Sample, InvalidFields> {
        var errors: [FieldError] = []
        let uuid = UUID(uuidString: input.id)
        if uuid == nil { errors.append(.init(field: "id", message: "must be a UUID")) }
        let identifier = uploadTypes[input.type]
        if identifier == nil {
            errors.append(.init(field: "type", message: "must be one of " + uploadTypes.keys.sorted().joined(separator: ", ")))
        }
        let value = identifier.flatMap { reading(input, of: $0, errors: &errors) }
        HealthSampleValidator.checkInterval(input, type: nil, now: now, errors: &errors)
        HealthSampleValidator.checkText(input, errors: &errors)
        guard errors.isEmpty, let uuid, let identifier, let value else { return .failure(InvalidFields(errors)) }
        return .success(Sample(identifier: identifier, day: day(input.start), value: value, uuid: uuid))
    }

    /// The value the import reads: a category's raw value, or a temperature in °C.
    private static func reading(_ input: HealthSampleInput, of identifier: String, errors: inout [FieldError]) -> Double? {
        guard let value = input.value else {
            errors.append(.init(field: "value", message: "is required for \(input.type)"))
            return nil
        }
        guard value.isFinite else {
            errors.append(.init(field: "value", message: "must be a finite number"))
            return nil
        }
        let categories: ClosedRange<Int>? = switch identifier {
        case ovulationTestResult: 1...4
        case cervicalMucusQuality, menstrualFlow: 1...5
        default: nil
        }
        if let categories {
            if let unit = input.unit, !unit.isEmpty { errors.append(.init(field: "unit", message: "must be absent for \(input.type)")) }
            guard value == value.rounded(), categories.contains(Int(value)) else {
                errors.append(.init(field: "value", message: "must be a whole number from \(categories.lowerBound) to \(categories.upperBound)"))
                return nil
            }
            return value
        }
        let celsius: Double
        switch input.unit?.lowercased() {
        case nil, "", "degc": celsius = value
        case "degf": celsius = ((value - 32) * 5 / 9 * 1000).rounded() / 1000
        default:
            errors.append(.init(field: "unit", message: "must be one of degC, degF"))
            return nil
        }
        let range = identifier == basalBodyTemperature ? FertilitySignalRules.basalTemperatureRange : wristTemperatureRange
        guard range.contains(celsius) else {
            errors.append(.init(field: "value", message: "must be between \(range.lowerBound) and \(range.upperBound) °C"))
            return nil
        }
        return celsius
    }
}

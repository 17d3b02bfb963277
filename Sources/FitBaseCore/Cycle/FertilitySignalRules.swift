/// A fertility signal as its writer sent it (REST body, pushed mutation or HealthKit upload), before any rule is checked.
public struct FertilitySignalDraft: Sendable, Equatable {
    /// `YYYY-MM-DD` when valid.
    public var date: String
    /// One of ``FertilitySignalType``.
    public var type: String
    /// An ``LHTestResult`` for `lhTest`, a ``CervicalMucus`` level for `cervicalMucus`.
    public var result: String?
    /// The temperature (`basalBodyTemperature`) or its deviation from the baseline (`wristTemperature`).
    public var value: Double?
    /// `celsius` (the default) or `fahrenheit`.
    public var unit: String?

    /// A draft from the input's fields.
    public init(date: String, type: String, result: String? = nil, value: Double? = nil, unit: String? = nil) {
        self.date = date
        self.type = type
        self.result = result
        self.value = value
        self.unit = unit
    }
}

/// The rules of a fertility signal: a date written `YYYY-MM-DD`, not after today in the user's time zone; an LH test
/// carries a `result` of ``LHTestResult``, cervical mucus a `result` of ``CervicalMucus``; a basal body temperature
/// carries a `value` between 35.0 and 38.5 °C (95.0–101.3 °F with `unit: "fahrenheit"`), a wrist temperature a
/// deviation from the baseline within ±3 °C (±5.4 °F); a field the type does not use must be absent.
public enum FertilitySignalRules {
    /// The basal body temperatures a thermometer reading can plausibly be, in °C.
    public static let basalTemperatureRange = 35.0...38.5
    /// The wrist temperature deviations accepted, in °C.
    public static let wristDeviationRange = -3.0...3.0

    /// The signal `draft` describes, checked against `today` in the user's time zone; throws every broken rule at once,
    /// in field order. Temperatures are stored in °C (to the thousandth).
    public static func checked(_ draft: FertilitySignalDraft, id: FertilitySignalID, today: CalendarDay) throws(InvalidFields) -> FertilitySignal {
        var errors: [FieldError] = []
        let date = CalendarDay(draft.date)
        if date == nil { errors.append(.init(field: "date", message: "must be a date written YYYY-MM-DD")) }
        if let date, date > today { errors.append(.init(field: "date", message: "must not be in the future")) }
        let type = FertilitySignalType(rawValue: draft.type)
        if type == nil {
            errors.append(.init(field: "type", message: "must be one of \(FertilitySignalType.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        let unit = draft.unit.map { TemperatureUnit(rawValue: $0) } ?? .celsius
        var reading: FertilitySignal.Reading?
        switch type {
        case .lhTest, .cervicalMucus:
            let allowed = type == .lhTest ? LHTestResult.allCases.map(\.rawValue) : CervicalMucus.allCases.map(\.rawValue)
            if let result = draft.result, allowed.contains(result) {
                reading = type == .lhTest ? LHTestResult(rawValue: result).map { .lhTest($0) } : CervicalMucus(rawValue: result).map { .cervicalMucus($0) }
            } else {
                errors.append(.init(field: "result", message: "must be one of \(allowed.joined(separator: ", ")) for \(draft.type)"))
            }
            if draft.value != nil { errors.append(.init(field: "value", message: "must be absent for \(draft.type)")) }
            if draft.unit != nil { errors.append(.init(field: "unit", message: "must be absent for \(draft.type)")) }
        case .basalBodyTemperature, .wristTemperature:
            if draft.result != nil { errors.append(.init(field: "result", message: "must be absent for \(draft.type)")) }
            let isDeviation = type == .wristTemperature
            let range = isDeviation ? wristDeviationRange : basalTemperatureRange
            if let value = draft.value, value.isFinite, let unit {
                let celsius = ((unit == .celsius ? value : isDeviation ? value * 5 / 9 : (value - 32) * 5 / 9) * 1000).rounded() / 1000
                if range.contains(celsius) {
                    reading = isDeviation ? .wristTemperature(deviationCelsius: celsius) : .basalBodyTemperature(celsius: celsius)
                } else {
                    let what = isDeviation ? "a deviation between \(range.lowerBound) and \(range.upperBound) °C" : "between \(range.lowerBound) and \(range.upperBound) °C"
                    errors.append(.init(field: "value", message: "must be \(what) (\(unit == .celsius ? "°C" : "converted from °F"))"))
                }
            } else if draft.value == nil || draft.value?.isFinite == false {
                errors.append(.init(field: "value", message: "must be a number for \(draft.type)"))
            }
            if unit == nil {
                errors.append(.init(field: "unit", message: "must be one of \(TemperatureUnit.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
        case nil:
            break
        }
        guard let date, let reading, errors.isEmpty else { throw InvalidFields(errors) }
        return FertilitySignal(id: id, date: date, reading: reading)
    }
}

import Foundation

/// A product analytics event as the app reports it: what happened (`workout_started`), when, and a few category-like
/// properties (`screen=library`). Never health or cycle data: ``ProductEventRules`` refuses it.
public struct ProductEvent: Sendable, Equatable {
    /// The client's id of the event: sending it again is not counted twice.
    public var id: UUID
    /// snake_case, e.g. `paywall_shown`.
    public var name: String
    public var occurredAt: Date
    public var properties: [String: ProductEventValue]

    /// Makes an event.
    public init(id: UUID, name: String, occurredAt: Date, properties: [String: ProductEventValue] = [:]) {
        self.id = id
        self.name = name
        self.occurredAt = occurredAt
        self.properties = properties
    }
}

/// A property's value: a short string, a finite number or a flag.
public enum ProductEventValue: Sendable, Equatable, Hashable {
    case string(String)
    case number(Double)
    case bool(Bool)
}

/// What a batch of analytics events may hold, checked by the server before anything is stored (and usable by a client
/// before it sends).
///
/// The health rule — analytics must never become a second, unencrypted, unaudited copy of health data:
/// 1. a property whose key names health or cycle data is refused whatever its value: the health sample types,
///    sleep stages and fertility signals of Core (`heartRate`, `asleepDeep`, `lhTest`, …), blood pressure's parts, and
///    the cycle's words (`cycle_day`, `ovulation`, `menstrual`, …), compared without case, `_` or `-` and found anywhere
///    in the key (`resting_heart_rate`);
/// 2. a key that is exactly a health or cycle word (`phase`, `flow`, `period`, `mood`, `weight`, …) is refused too;
/// 3. a number is refused under a key that names a health metric anywhere (`steps`, `sleep`, `bpm`, `temperature`, …):
///    `daily_steps: 8000` is a health value, `onboarding_steps: 3` must be named otherwise (`onboarding_page`);
/// 4. a string value that is a cycle phase (`luteal`) is refused under any key.
/// Naming a metric as a category stays allowed (`metric: "heartRate"` says which chart was opened, not a reading).
public enum ProductEventRules {
    /// Events one request may send.
    public static let maximumBatch = 100
    /// Properties one event may carry.
    public static let maximumProperties = 20
    public static let maximumNameLength = 64
    public static let maximumKeyLength = 40
    public static let maximumStringLength = 200
    /// How far back an event may have happened (an app offline for weeks sends its queue late) …
    public static let maximumAge: TimeInterval = 30 * 86_400
    /// … and how far ahead of the server's clock a device's may run.
    public static let maximumClockSkew: TimeInterval = 3_600

    /// Every broken rule of `events` (field paths `events[i].…`), empty when the batch may be stored.
    public static func violations(of events: [ProductEvent], now: Date) -> [FieldError] {
        guard !events.isEmpty else { return [FieldError(field: "events", message: "must hold at least one event")] }
        guard events.count <= maximumBatch else { return [FieldError(field: "events", message: "must have at most \(maximumBatch) items")] }
        var errors: [FieldError] = []
        var seen: Set<UUID> = []
        for (index, event) in events.enumerated() {
            let path = "events[\(index)]"
            if !seen.insert(event.id).inserted { errors.append(FieldError(field: "\(path).id", message: "repeats an earlier event's id in this batch")) }
            if !isName(event.name) {
                errors.append(FieldError(field: "\(path).name", message: "must be 1 to \(maximumNameLength) lowercase letters, digits and _, starting with a letter"))
            }
            if event.occurredAt < now.addingTimeInterval(-maximumAge) {
                errors.append(FieldError(field: "\(path).occurredAt", message: "must be within the last \(Int(maximumAge / 86_400)) days"))
            } else if event.occurredAt > now.addingTimeInterval(maximumClockSkew) {
                errors.append(FieldError(field: "\(path).occurredAt", message: "must not be in the future"))
            }
            if event.properties.count > maximumProperties {
                errors.append(FieldError(field: "\(path).properties", message: "must have at most \(maximumProperties) properties"))
                continue
            }
            for key in event.properties.keys.sorted() {
                guard let value = event.properties[key] else { continue }
                errors += violations(key: key, value: value, field: "\(path).properties.\(key)")
            }
        }
        return errors
    }

    /// The broken rules of one property.
    public static func violations(key: String, value: ProductEventValue, field: String) -> [FieldError] {
        guard isKey(key) else {
            return [FieldError(field: field, message: "must be named by 1 to \(maximumKeyLength) letters, digits and _, starting with a letter")]
        }
        if let reason = healthReason(key: key, value: value) { return [FieldError(field: field, message: reason)] }
        switch value {
        case .string(let text) where text.count > maximumStringLength:
            return [FieldError(field: field, message: "must be at most \(maximumStringLength) characters")]
        case .number(let number) where !number.isFinite:
            return [FieldError(field: field, message: "must be a finite number")]
        default:
            return []
        }
    }

    /// Why `key: value` is health or cycle data (rules 1–4 above), or `nil`.
    public static func healthReason(key: String, value: ProductEventValue) -> String? {
        let normalized = normalize(key)
        if let term = healthTerms.first(where: { normalized.contains($0) }) {
            return "is health or cycle data (\"\(term)\"): analytics events never carry it"
        }
        if healthWords.contains(normalized) {
            return "is health or cycle data: analytics events never carry it"
        }
        if case .number = value, let metric = healthMetrics.first(where: { normalized.contains($0) }) {
            return "is a health value (a number under a key naming \"\(metric)\"): analytics events never carry one"
        }
        if case .string(let text) = value, CyclePhase(rawValue: text.lowercased()) != nil {
            return "is a cycle phase: analytics events never carry cycle data"
        }
        return nil
    }

    /// Terms refused anywhere in a key, normalized: Core's health sample types but the two plain words (steps, sleep;
    /// rule 3 covers their numbers), sleep stages, fertility signals, and the cycle's and blood pressure's words.
    static let healthTerms: [String] = {
        let samples = HealthSampleType.allCases.filter { $0 != .steps && $0 != .sleep }.map(\.rawValue)
        let stages = SleepStage.allCases.map(\.rawValue)
        let signals = FertilitySignalType.allCases.map(\.rawValue)
        let words = [
            "systolic", "diastolic", "spo2", "heartbeat", "pulserate", "restinghr", "hrv", "bloodglucose", "basaltemp", "bbt", "ovulat",
            "menstrua", "menses", "fertil", "pregnan", "cycleday", "cyclelength", "cyclephase", "periodlength", "periodstart", "periodend",
            "lastperiod", "nextperiod", "periodflow", "luteal", "follicular", "symptom", "cervical", "lhsurge",
        ]
        return (samples + stages + signals).map(ProductEventRules.normalize) + words
    }()

    /// Keys refused when they are exactly one of these words.
    static let healthWords: Set<String> = [
        "phase", "flow", "period", "periods", "cycle", "mood", "weight", "bmi", "temperature", "pulse", "bpm", "glucose", "steps", "sleep",
        "hr", "bp", "lh", "spotting", "cramps",
    ]

    /// Metrics whose numbers are health values (rule 3).
    static let healthMetrics: [String] = ["steps", "sleep", "bpm", "pulse", "temperature", "weight", "glucose", "oxygen", "heart", "bmi"]

    static func normalize(_ key: String) -> String {
        key.lowercased().filter { $0 != "_" && $0 != "-" }
    }

    static func isName(_ name: String) -> Bool {
        let scalars = name.unicodeScalars.map(\.value)
        guard let first = scalars.first, isLower(first), scalars.count <= maximumNameLength else { return false }
        return scalars.allSatisfy { isLower($0) || isDigit($0) || $0 == 0x5F }
    }

    static func isKey(_ key: String) -> Bool {
        let scalars = key.unicodeScalars.map(\.value)
        guard let first = scalars.first, isLower(first) || isUpper(first), scalars.count <= maximumKeyLength else { return false }
        return scalars.allSatisfy { isLower($0) || isUpper($0) || isDigit($0) || $0 == 0x5F }
    }

    private static func isLower(_ scalar: UInt32) -> Bool { (0x61...0x7A).contains(scalar) }
    private static func isUpper(_ scalar: UInt32) -> Bool { (0x41...0x5A).contains(scalar) }
    private static func isDigit(_ scalar: UInt32) -> Bool { (0x30...0x39).contains(scalar) }
}

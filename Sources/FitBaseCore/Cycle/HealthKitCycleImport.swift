#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns HealthKit's reproductive-health samples, as an app reads them, into FitBase's cycle records: the signals of
/// ``OvulationDetector`` and the periods of ``PeriodRules``. Pure, so an app's HealthKit reader and the tests share it;
/// the records it makes go to the server like any other (`cycleSignals` and `cycleLogs` through sync, or REST).
///
/// * `HKCategoryTypeIdentifierOvulationTestResult`: `negative` (1) → an LH test `negative`; `luteinizingHormoneSurge`
///   (2) → `positive`; `indeterminate` (3) → `indeterminate`; `estrogenSurge` (4) is not an LH result and is skipped.
/// * `HKQuantityTypeIdentifierBasalBodyTemperature` (°C) → a basal body temperature, when 35.0–38.5 °C.
/// * `HKQuantityTypeIdentifierAppleSleepingWristTemperature` (°C, the night's wrist temperature) → its deviation from
///   the user's baseline, taken as the median of up to 30 earlier nights of the batch (the Health app shows deviations
///   the same way); nights with fewer than five earlier ones are skipped, as Apple waits for a baseline too.
/// * `HKCategoryTypeIdentifierCervicalMucusQuality`: dry (1), sticky (2), creamy (3), watery (4), egg white (5) → the
///   four-level scale, watery counted as egg white.
/// * `HKCategoryTypeIdentifierMenstrualFlow`: days with flow (unspecified 1, light 2, medium 3, heavy 4; not none 5)
///   become periods: days at most one apart are one period, with its heaviest flow; a run that starts within a day of a
///   logged period's days extends that period instead of adding another.
public enum HealthKitCycleImport {
    /// One HealthKit sample: its type identifier, the day it belongs to in the user's time zone, its value (the
    /// category's raw value, or the quantity in °C) and HealthKit's UUID of it.
    public struct Sample: Sendable, Equatable {
        public var identifier: String
        public var day: CalendarDay
        public var value: Double
        /// HealthKit's `uuid` of the sample: the signal made of it keeps it as its id, so importing the same samples
        /// again replaces those signals instead of adding copies.
        public var uuid: UUID?

        public init(identifier: String, day: CalendarDay, value: Double, uuid: UUID? = nil) {
            self.identifier = identifier
            self.day = day
            self.value = value
            self.uuid = uuid
        }

        /// The id of the signal made of this sample.
        var signalID: FertilitySignalID { uuid.map(FertilitySignalID.init(rawValue:)) ?? FertilitySignalID() }
    }

    public static let ovulationTestResult = "HKCategoryTypeIdentifierOvulationTestResult"
    public static let basalBodyTemperature = "HKQuantityTypeIdentifierBasalBodyTemperature"
    public static let sleepingWristTemperature = "HKQuantityTypeIdentifierAppleSleepingWristTemperature"
    public static let cervicalMucusQuality = "HKCategoryTypeIdentifierCervicalMucusQuality"
    public static let menstrualFlow = "HKCategoryTypeIdentifierMenstrualFlow"
    /// Every HealthKit type this reads.
    public static let identifiers: Set<String> = [ovulationTestResult, basalBodyTemperature, sleepingWristTemperature, cervicalMucusQuality, menstrualFlow]

    /// The fertility signals among `samples`, oldest first (new ids; unknown types and values skipped). Send whole nights
    /// of wrist temperature at once: each night's baseline is the nights before it in the same call.
    public static func signals(_ samples: [Sample]) -> [FertilitySignal] {
        var signals: [FertilitySignal] = []
        var nights: [(day: CalendarDay, celsius: Double)] = []
        // By day, keeping the given order within a day (the sort itself is not stable).
        let ordered = samples.enumerated().sorted { ($0.element.day, $0.offset) < ($1.element.day, $1.offset) }.map(\.element)
        for sample in ordered {
            switch sample.identifier {
            case ovulationTestResult:
                let result: LHTestResult? = switch Int(sample.value) {
                case 1: .negative
                case 2: .positive
                case 3: .indeterminate
                default: nil
                }
                if let result { signals.append(FertilitySignal(id: sample.signalID, date: sample.day, reading: .lhTest(result))) }
            case basalBodyTemperature where FertilitySignalRules.basalTemperatureRange.contains(sample.value):
                signals.append(FertilitySignal(id: sample.signalID, date: sample.day, reading: .basalBodyTemperature(celsius: sample.value)))
            case cervicalMucusQuality:
                let mucus: CervicalMucus? = switch Int(sample.value) {
                case 1: .dry
                case 2: .sticky
                case 3: .creamy
                case 4, 5: .eggWhite
                default: nil
                }
                if let mucus { signals.append(FertilitySignal(id: sample.signalID, date: sample.day, reading: .cervicalMucus(mucus))) }
            case sleepingWristTemperature:
                let baseline = nights.suffix(30).map(\.celsius)
                if baseline.count >= 5 {
                    let deviation = ((sample.value - CycleEstimates.median(baseline)) * 1000).rounded() / 1000
                    if FertilitySignalRules.wristDeviationRange.contains(deviation) {
                        signals.append(FertilitySignal(id: sample.signalID, date: sample.day, reading: .wristTemperature(deviationCelsius: deviation)))
                    }
                }
                nights.append((sample.day, sample.value))
            default:
                continue
            }
        }
        return signals
    }

    /// The periods the menstrual-flow days of `samples` make, merged into `existing` (the user's logged periods): new
    /// periods get new ids, extended ones keep theirs. Only the periods to save are returned.
    public static func periods(_ samples: [Sample], existing: [Period]) -> [Period] {
        var flowByDay: [CalendarDay: PeriodFlow?] = [:]
        for sample in samples where sample.identifier == menstrualFlow {
            let flow: PeriodFlow?? = switch Int(sample.value) {
            case 1: .some(nil)
            case 2: .some(.light)
            case 3: .some(.medium)
            case 4: .some(.heavy)
            default: nil
            }
            guard let flow else { continue }
            flowByDay[sample.day] = heavier(flowByDay[sample.day] ?? nil, flow)
        }
        var runs: [(start: CalendarDay, end: CalendarDay, flow: PeriodFlow?)] = []
        for day in flowByDay.keys.sorted() {
            let flow = flowByDay[day] ?? nil
            if let last = runs.last, last.end.days(until: day) <= 2 {
                runs[runs.count - 1] = (last.start, day, heavier(last.flow, flow))
            } else {
                runs.append((day, day, flow))
            }
        }
        var saved: [Period] = []
        var known = existing
        for run in runs {
            if let index = known.firstIndex(where: { period in
                let end = period.end ?? period.start
                return run.start.days(until: end) >= -2 && period.start.days(until: run.end) >= -2
            }) {
                var period = known[index]
                let start = min(period.start, run.start)
                let end = max(period.end ?? period.start, run.end)
                guard start != period.start || end != period.end || (period.flow == nil && run.flow != nil) else { continue }
                period.start = start
                period.end = start.days(until: end) <= 19 ? end : period.end
                period.flow = heavier(period.flow, run.flow)
                known[index] = period
                saved.removeAll { $0.id == period.id }
                saved.append(period)
            } else {
                let period = Period(start: run.start, end: run.start.days(until: run.end) <= 19 ? run.end : nil, flow: run.flow)
                known.append(period)
                saved.append(period)
            }
        }
        return saved
    }

    private static func heavier(_ a: PeriodFlow?, _ b: PeriodFlow?) -> PeriodFlow? {
        let order: [PeriodFlow] = [.spotting, .light, .medium, .heavy]
        guard let a else { return b }
        guard let b else { return a }
        return (order.firstIndex(of: a) ?? 0) >= (order.firstIndex(of: b) ?? 0) ? a : b
    }
}

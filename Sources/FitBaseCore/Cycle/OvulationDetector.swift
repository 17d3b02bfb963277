/// Finds the day of ovulation in one cycle from the user's fertility signals: pure rules, the same on the server and
/// the device.
///
/// * **LH surge.** Ovulation follows the onset of the urinary LH surge by about 24–36 hours, so it is placed on the day
///   after the first positive test that follows a negative one (WHO Task Force 1980, Am J Obstet Gynecol 138:383;
///   Direito et al. 2013, Fertil Steril 99:279 — ovulation within a day of "LH + 1" in most cycles). A positive with no
///   test before it in the cycle counts too (its onset may have been a day earlier). When the cycle has two surges
///   (positives, then negatives, then positives), the later one is used: LH stays low once the corpus luteum forms, so
///   a second surge means the first did not lead to ovulation — unless a temperature shift confirms the first.
/// * **Basal body temperature**, the Sensiplan "three over six" rule (Frank-Herrmann et al. 2007, Hum Reprod 22:1310;
///   Arbeitsgruppe NFP, *Natürlich und sicher*): a rise is the first of three consecutive readings that are all higher
///   than the highest of the six readings before them (the cover line), the third at least 0.2 °C above it; when the
///   third is not, a fourth above the cover line confirms it (the rule's first exception). Ovulation is placed on the
///   day of the last low reading, the day before the first high one (Ecochard et al. 2001, BJOG 108:822: ovulation
///   falls most often within a day of the last low temperature). Disturbed readings are left out, as the method
///   brackets them out: a fever (37.6 °C or more, ``feverCelsius``) and a lone spike 0.4 °C above both neighbours. A rise
///   whose last low reading is more than two days before its first high one (a gap in the chart) confirms that
///   ovulation happened but cannot date it, and is not used.
/// * **Wrist temperature** (nightly deviations from the user's baseline, as Apple Watch records them) runs warmer in
///   the luteal phase by about 0.3 °C (Shilaih et al. 2018, Biosci Rep 38:BSR20171279), with more night-to-night noise
///   than an oral thermometer, so one night may not stand out: a rise is three consecutive nights each above the mean
///   of the six nights before them by more than 0.1 °C and together by at least 0.25 °C on average. Ovulation is
///   the day before the first warm night. The threshold is ours, a little under the reported mean rise.
///
/// **Which wins.** An LH surge dates ovulation to the day; a temperature rise confirms, a day or two late, that it
/// happened. So a surge is used whenever there is one, unless a temperature rise dates ovulation more than two days
/// from it (a surge that did not lead to ovulation): then the temperature wins. Of two temperature rises, the basal
/// one wins: a thermometer under the tongue on waking tracks core temperature more closely than the wrist.
public enum OvulationDetector {
    /// The basal temperature from which a reading counts as a fever and is left out, in °C.
    public static let feverCelsius = 37.6
    /// Temperatures are read to a hundredth of a degree: differences within a millionth are equal, whatever binary
    /// floating point makes of 36.35 or 36.3 + 0.05.
    static let tolerance = 1e-6
    /// Days from the onset of an LH surge to ovulation.
    public static let daysFromSurgeToOvulation = 1

    /// How ovulation was found in a cycle.
    public enum Method: String, Sendable, Hashable, Codable, CaseIterable {
        case lhSurge, basalTemperatureShift, wristTemperatureShift
    }

    /// Ovulation found from the signals of one cycle.
    public struct Detection: Sendable, Equatable {
        /// The day ovulation is placed on.
        public let date: CalendarDay
        /// The rule that dated it.
        public let method: Method
        /// Every kind of signal that found a rise or surge agreeing with the date (within two days).
        public let signals: [FertilitySignalType]
        /// Why this rule won, for the user and for logs.
        public let reason: String
    }

    /// Ovulation in the cycle that began on `cycleStart`, from the signals dated `cycleStart` through `lastDay` (the day
    /// before the next period, or today); `nil` when no rule finds it.
    public static func detect(in signals: [FertilitySignal], cycleStart: CalendarDay, through lastDay: CalendarDay) -> Detection? {
        let inCycle = signals.filter { $0.date >= cycleStart && $0.date <= lastDay }
        let surges = lhSurges(inCycle)
        let basal = basalShift(inCycle)
        let wrist = wristShift(inCycle)
        let temperature: (date: CalendarDay, method: Method)? =
            basal.map { ($0, .basalTemperatureShift) } ?? wrist.map { ($0, .wristTemperatureShift) }
        func agreeing(_ date: CalendarDay) -> [FertilitySignalType] {
            var kinds: [FertilitySignalType] = []
            if surges.contains(where: { abs($0.adding(days: daysFromSurgeToOvulation).days(until: date)) <= 2 }) { kinds.append(.lhTest) }
            if let basal, abs(basal.days(until: date)) <= 2 { kinds.append(.basalBodyTemperature) }
            if let wrist, abs(wrist.days(until: date)) <= 2 { kinds.append(.wristTemperature) }
            return kinds
        }
        if let temperature {
            let confirmed = surges.last { abs($0.adding(days: daysFromSurgeToOvulation).days(until: temperature.date)) <= 2 }
            if let confirmed {
                let date = confirmed.adding(days: daysFromSurgeToOvulation)
                return Detection(
                    date: date, method: .lhSurge, signals: agreeing(date),
                    reason: "the LH surge dates ovulation to the day; the temperature rise confirms it"
                )
            }
            let source = temperature.method == .basalTemperatureShift ? "basal" : "wrist"
            let reason = surges.isEmpty
                ? "a sustained \(source) temperature rise; no LH surge was logged"
                : "a sustained \(source) temperature rise more than two days from the LH surge: that surge did not lead to ovulation"
            return Detection(date: temperature.date, method: temperature.method, signals: agreeing(temperature.date), reason: reason)
        }
        guard let surge = surges.last else { return nil }
        let date = surge.adding(days: daysFromSurgeToOvulation)
        return Detection(
            date: date, method: .lhSurge, signals: agreeing(date),
            reason: surges.count > 1 ? "the later of \(surges.count) LH surges: an earlier surge followed by another did not lead to ovulation" : "an LH surge"
        )
    }

    /// The first day of each LH surge, oldest first: a positive test that is the cycle's first test or follows a
    /// negative one (indeterminate results neither start nor end a surge).
    public static func lhSurges(_ signals: [FertilitySignal]) -> [CalendarDay] {
        var results: [CalendarDay: LHTestResult] = [:]
        for signal in signals {
            guard case .lhTest(let result) = signal.reading, result != .indeterminate else { continue }
            // One result per day: a positive that day wins (a strip read too early can miss the surge, not invent it).
            if results[signal.date] != .positive { results[signal.date] = result }
        }
        var surges: [CalendarDay] = []
        var previous: LHTestResult?
        for day in results.keys.sorted() {
            let result = results[day]
            if result == .positive && previous != .positive { surges.append(day) }
            previous = result
        }
        return surges
    }

    /// The day of ovulation a basal temperature rise dates (the last low reading), by the three-over-six rule.
    public static func basalShift(_ signals: [FertilitySignal]) -> CalendarDay? {
        let readings = dailyMeans(signals.compactMap { signal in
            if case .basalBodyTemperature(let celsius) = signal.reading { (signal.date, celsius) } else { nil }
        })
        let usable = readings.enumerated().filter { index, reading in
            if reading.value >= feverCelsius - tolerance { return false }
            guard index > 0, index + 1 < readings.count else { return true }
            return !(reading.value - readings[index - 1].value >= 0.4 - tolerance && reading.value - readings[index + 1].value >= 0.4 - tolerance)
        }.map(\.element)
        guard usable.count >= 9 else { return nil }
        for first in 6..<(usable.count - 2) {
            let cover = usable[(first - 6)..<first].map(\.value).max() ?? 0
            let highs = usable[first..<(first + 3)].map(\.value)
            guard highs.allSatisfy({ $0 > cover + tolerance }) else { continue }
            let confirmed = highs[2] >= cover + 0.2 - tolerance || (first + 3 < usable.count && usable[first + 3].value > cover + tolerance)
            guard confirmed else { continue }
            let lastLow = usable[first - 1].day
            return lastLow.days(until: usable[first].day) <= 2 ? usable[first].day.adding(days: -1) : nil
        }
        return nil
    }

    /// The day of ovulation a wrist temperature rise dates (the day before the first warm night).
    public static func wristShift(_ signals: [FertilitySignal]) -> CalendarDay? {
        let nights = dailyMeans(signals.compactMap { signal in
            if case .wristTemperature(let deviation) = signal.reading { (signal.date, deviation) } else { nil }
        })
        guard nights.count >= 9 else { return nil }
        for first in 6..<(nights.count - 2) {
            let baseline = nights[(first - 6)..<first].map(\.value).reduce(0, +) / 6
            let warm = nights[first..<(first + 3)].map(\.value)
            guard warm.allSatisfy({ $0 > baseline + 0.1 + tolerance }), warm.reduce(0, +) / 3 >= baseline + 0.25 - tolerance else { continue }
            return nights[first - 1].day.days(until: nights[first].day) <= 2 ? nights[first].day.adding(days: -1) : nil
        }
        return nil
    }

    /// One value a day (the mean of that day's readings), oldest first.
    private static func dailyMeans(_ readings: [(CalendarDay, Double)]) -> [(day: CalendarDay, value: Double)] {
        let byDay = Dictionary(grouping: readings, by: \.0)
        return byDay.keys.sorted().map { day in
            let values = byDay[day, default: []].map(\.1)
            return (day, values.reduce(0, +) / Double(values.count))
        }
    }
}

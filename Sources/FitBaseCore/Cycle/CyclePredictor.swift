/// Predicts the next period from the user's own logged cycles and fertility signals, and says how sure it is.
///
/// * **Cycle lengths**, **expected length** and **variability** come from ``CycleEstimates``: gaps that are not cycles
///   or mean a missed log are ignored; the expected length is a recency-weighted, winsorized mean, leaning on the
///   profile's average while there are fewer than three cycles; the variability is robust and pooled with the
///   population's 3.4 days.
/// * **Once ovulation is detected in the current cycle** (``OvulationDetector``: an LH surge, a basal or a wrist
///   temperature rise), the next period is ovulation plus the user's luteal phase — the days from ovulation to the next
///   period in their past cycles with a detected ovulation, shrunk toward 12.4 days while there are few (Bull et al.
///   2019). The luteal phase varies far less than the follicular one, so the range narrows.
/// * **80 % range**: the expected start ± a multiple of the predictive standard deviation (the spread of one more
///   cycle plus the uncertainty of its mean), the multiple calibrated on a generated population so that the range holds
///   the actual start about 80 % of the time (``lengthRangeScale``, ``lutealRangeScale``; `scripts/cycle-eval.sh`).
/// * **Ovulation**: the detected day, else the next start less the user's luteal phase; the fertile window is the five
///   days before it and the day itself.
/// * **Patterns** (FIGO 2018 definitions of normal menstruation): `irregular` when the shortest and longest of at
///   least three recent cycles differ by 10 days or more; `infrequent` when the expected length exceeds 38 days;
///   `frequent` when it is under 24 days; `prolonged` when bleeding lasts more than 8 days on average.
public struct CyclePredictor: Sendable {
    public static let populationStandardDeviation = CycleEstimates.populationStandardDeviation
    /// The range's half-width in predictive standard deviations when the date comes from cycle lengths (calibrated).
    public static let lengthRangeScale = 1.15
    /// The range's half-width in predictive standard deviations when the date comes from ovulation (calibrated).
    public static let lutealRangeScale = 1.06

    /// One logged period.
    public struct Period: Sendable, Equatable {
        public let start: CalendarDay
        /// The last day of bleeding, when logged.
        public let end: CalendarDay?

        public init(start: CalendarDay, end: CalendarDay? = nil) {
            self.start = start
            self.end = end
        }
    }

    /// Which rule produced the next start (the contract's `PredictionMethod`).
    public enum Method: String, Sendable, Hashable, Codable, CaseIterable {
        /// Ovulation detected in the current cycle plus the user's luteal phase.
        case ovulation
        /// The user's own cycle lengths.
        case cycleHistory
        /// No complete cycle yet: the profile's average cycle length.
        case profileAverage
    }

    /// What the prediction rests on.
    public struct Basis: Sendable, Equatable {
        public let cyclesUsed: Int
        public let meanLength: Double
        public let variability: Double
        /// The rule that produced the next start.
        public let method: Method
        /// The user's luteal phase in days (the population's 12.4 shrunk toward their own).
        public let lutealLength: Double
        /// Past cycles whose luteal phase was measured (ovulation detected, next period logged).
        public let lutealCyclesUsed: Int
    }

    /// Whether a cycle's ovulation was found in its signals or only estimated (the contract's `OvulationSource`).
    public enum OvulationSource: String, Sendable, Hashable, Codable, CaseIterable {
        case detected, estimated
    }

    /// The ovulation of one cycle.
    public struct Ovulation: Sendable, Equatable {
        public let date: CalendarDay
        public let source: OvulationSource
        /// The kinds of signal that agree with a detected date (empty when estimated).
        public let signals: [FertilitySignalType]
        /// The detection, when detected.
        public let detection: OvulationDetector.Detection?
    }

    /// How far a prediction can be trusted (the contract's `PredictionConfidence`).
    public enum Confidence: String, Sendable, Hashable, Codable, CaseIterable {
        case high, medium, low
    }

    /// A FIGO 2018 irregularity of the cycles a prediction rests on (the contract's `CyclePattern`).
    public enum Pattern: String, Sendable, Hashable, Codable, CaseIterable {
        case irregular, infrequent, frequent, prolonged
    }

    public struct Prediction: Sendable, Equatable {
        public let lastPeriodStart: CalendarDay
        /// Rounded expected cycle length in days (of cycles to come; the current one ends at ``nextPeriodStart``).
        public let expectedLength: Int
        public let periodLength: Int
        public let nextPeriodStart: CalendarDay
        /// The 80 % range of the next start.
        public let nextPeriodRange: ClosedRange<CalendarDay>
        /// The current cycle's ovulation, detected or estimated.
        public let ovulation: Ovulation
        public let fertileWindow: ClosedRange<CalendarDay>
        public let basis: Basis
        public let confidence: Confidence
        public let patterns: Set<Pattern>
        /// Where `today` falls in the current cycle.
        public let today: PhasePosition

        /// The current cycle's ovulation day.
        public var ovulationDate: CalendarDay { ovulation.date }
    }

    public let profileCycleLength: Int
    public let profilePeriodLength: Int

    public init(profileCycleLength: Int = 28, profilePeriodLength: Int = 5) {
        self.profileCycleLength = profileCycleLength
        self.profilePeriodLength = profilePeriodLength
    }

    /// The usable cycle lengths, oldest first, from period starts in any order (``CycleEstimates/cycleLengths(_:)``).
    public static func cycleLengths(_ starts: [CalendarDay]) -> [Int] { CycleEstimates.cycleLengths(starts) }

    /// The detected ovulation of each complete cycle (keyed by the cycle's first day) and the luteal phases they give,
    /// oldest first; only luteal phases of 7–20 days count (a longer one means a missed log or a misread signal).
    public static func pastOvulations(starts: [CalendarDay], signals: [FertilitySignal]) -> (detections: [CalendarDay: OvulationDetector.Detection], lutealLengths: [Int]) {
        let sorted = Array(Set(starts)).sorted()
        var detections: [CalendarDay: OvulationDetector.Detection] = [:]
        var luteal: [Int] = []
        guard !signals.isEmpty else { return (detections, luteal) }
        for (start, next) in zip(sorted, sorted.dropFirst()) where (15...60).contains(start.days(until: next)) {
            guard let detection = OvulationDetector.detect(in: signals, cycleStart: start, through: next.adding(days: -1)) else { continue }
            detections[start] = detection
            let length = detection.date.days(until: next)
            if (7...20).contains(length) { luteal.append(length) }
        }
        return (detections, Array(luteal.suffix(12)))
    }

    /// The prediction for `today` from `periods` and the user's fertility `signals`; `nil` when no period has been logged.
    public func predict(periods: [Period], signals: [FertilitySignal] = [], today: CalendarDay) -> Prediction? {
        guard let last = periods.max(by: { $0.start < $1.start }) else { return nil }
        let starts = periods.map(\.start)
        let lengths = CycleEstimates.cycleLengths(starts)
        let mean = CycleEstimates.expectedLength(lengths, profileLength: profileCycleLength)
        let deviation = CycleEstimates.lengthStandardDeviation(lengths)
        let lutealLengths = Self.pastOvulations(starts: starts, signals: signals).lutealLengths
        let luteal = CycleEstimates.lutealPhase(lutealLengths)

        let bleedingDays = periods.compactMap { period in period.end.map { period.start.days(until: $0) + 1 } }.filter { (1...20).contains($0) }
        let periodLength = bleedingDays.isEmpty ? profilePeriodLength : Int((Double(bleedingDays.reduce(0, +)) / Double(bleedingDays.count)).rounded())
        let expectedLength = max(15, Int(mean.rounded()))

        // The current cycle's ovulation, when its signals show it (not in the days of bleeding: too early to be one).
        let detection = OvulationDetector.detect(in: signals, cycleStart: last.start, through: today)
            .flatMap { last.start.days(until: $0.date) >= 5 ? $0 : nil }
        // The expected start and its predictive standard deviation, in days after the last start.
        let method: Method
        let center: Double
        let spread: Double
        if let detection {
            method = .ovulation
            let follicular = Double(last.start.days(until: detection.date))
            center = follicular + CycleEstimates.lutealLength(luteal, measured: lutealLengths.count, cycleLength: lengths.isEmpty ? nil : mean, follicular: follicular)
            let meanUncertainty = 1 / (Double(lutealLengths.count) + 2)
            spread = Self.lutealRangeScale * luteal.standardDeviation * (1 + meanUncertainty).squareRoot()
        } else {
            method = lengths.isEmpty ? .profileAverage : .cycleHistory
            center = mean
            spread = Self.lengthRangeScale * deviation * (1 + 1 / Double(max(lengths.count, 1))).squareRoot()
        }
        let predictedStart = last.start.adding(days: Int(center.rounded()))
        let isLate = today > predictedStart
        let nextStart = isLate ? today : predictedStart
        let rangeStart = isLate ? today : last.start.adding(days: Int((center - spread).rounded()))
        let rangeEnd = max(rangeStart, last.start.adding(days: Int((center + spread).rounded())))

        let ovulation = detection.map { Ovulation(date: $0.date, source: .detected, signals: $0.signals, detection: $0) }
            ?? Ovulation(date: nextStart.adding(days: -Int(luteal.mean.rounded())), source: .estimated, signals: [], detection: nil)

        var patterns: Set<Pattern> = []
        if lengths.count >= 3, let shortest = lengths.min(), let longest = lengths.max(), longest - shortest >= 10 { patterns.insert(.irregular) }
        if !lengths.isEmpty && mean > 38 { patterns.insert(.infrequent) }
        if !lengths.isEmpty && mean < 24 { patterns.insert(.frequent) }
        if !bleedingDays.isEmpty && Double(bleedingDays.reduce(0, +)) / Double(bleedingDays.count) > 8 { patterns.insert(.prolonged) }

        let overdue = last.start.days(until: today) > 2 * expectedLength
        let confidence: Confidence =
            overdue || (lengths.isEmpty && detection == nil) || (deviation > 6 && detection == nil) ? .low
            : (detection != nil || (lengths.count >= 6 && deviation <= 3)) && !isLate ? .high
            : .medium

        let currentLength = last.start.days(until: nextStart)
        let ovulationDay = detection.map { last.start.days(until: $0.date) + 1 }
        return Prediction(
            lastPeriodStart: last.start, expectedLength: expectedLength, periodLength: periodLength,
            nextPeriodStart: nextStart, nextPeriodRange: rangeStart...rangeEnd, ovulation: ovulation,
            fertileWindow: ovulation.date.adding(days: -5)...ovulation.date,
            basis: Basis(
                cyclesUsed: lengths.count, meanLength: mean, variability: deviation, method: method,
                lutealLength: luteal.mean, lutealCyclesUsed: lutealLengths.count
            ),
            confidence: confidence, patterns: patterns,
            today: CyclePhases.position(
                cycleDay: last.start.days(until: today) + 1, length: detection == nil ? expectedLength : max(currentLength, 1),
                periodLength: periodLength, ovulationDay: ovulationDay
            )
        )
    }
}

extension CyclePredictor.Prediction {
    /// The day the prediction was made for.
    public var day: CalendarDay { lastPeriodStart.adding(days: today.cycleDay - 1) }

    /// Where `day` falls: the current cycle (never late before the prediction's day, as its length is not known
    /// yet; its ovulatory and luteal phases around the detected ovulation when there is one) until the predicted next
    /// start, then predicted cycles of the expected length; the prediction's own day is ``today``, late or not.
    public func position(on day: CalendarDay) -> PhasePosition {
        if day == self.day { return today }
        let sinceNextStart = nextPeriodStart.days(until: day)
        if sinceNextStart >= 0 {
            return CyclePhases.position(cycleDay: sinceNextStart % expectedLength + 1, length: expectedLength, periodLength: periodLength)
        }
        let cycleDay = lastPeriodStart.days(until: day) + 1
        if ovulation.source == .detected {
            let length = lastPeriodStart.days(until: nextPeriodStart)
            return CyclePhases.position(
                cycleDay: cycleDay, length: max(length, cycleDay), periodLength: periodLength, ovulationDay: lastPeriodStart.days(until: ovulation.date) + 1
            )
        }
        return CyclePhases.position(cycleDay: cycleDay, length: max(expectedLength, cycleDay), periodLength: periodLength)
    }
}

/// Predicts the next period from the user's own logged cycles, and says how sure it is.
///
/// * **Cycle lengths** are the gaps between logged period starts. Gaps under 15 or over 60 days are not cycles, and
///   once there are three or more, a gap at least 1.6 × the median of the others counts as a missed log (two cycles
///   in one gap); both are ignored. The last 12 cycles are used.
/// * **Expected length**: the mean of the last six usable cycles, shrunk toward the profile's average cycle length
///   when there are fewer than three (each missing cycle weighs like one observed at the profile average).
/// * **Variability**: the cycles' standard deviation, shrunk toward 3.4 days (Fehring et al. 2006) with the weight
///   of two cycles, so one or two cycles never look falsely regular.
/// * **80 % range**: expected start ± 1.28 standard deviations (the 10th–90th percentiles of a normal distribution),
///   less half a day for the whole days both ends include, rounded to the nearest day.
/// * **Ovulation**: 14 days (a typical luteal phase) before the expected start; the fertile window is the five days
///   before it and the day itself.
/// * **Patterns** (FIGO 2018 definitions of normal menstruation): `irregular` when the shortest and longest of at
///   least three recent cycles differ by 10 days or more; `infrequent` when the expected length exceeds 38 days;
///   `frequent` when it is under 24 days; `prolonged` when bleeding lasts more than 8 days on average.
public struct CyclePredictor: Sendable {
    public static let populationStandardDeviation = 3.4
    public static let lutealPhaseDays = 14

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

    /// What the prediction rests on.
    public struct Basis: Sendable, Equatable {
        public let cyclesUsed: Int
        public let meanLength: Double
        public let variability: Double
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
        /// Rounded expected cycle length in days.
        public let expectedLength: Int
        public let periodLength: Int
        public let nextPeriodStart: CalendarDay
        /// The 80 % range of the next start.
        public let nextPeriodRange: ClosedRange<CalendarDay>
        public let ovulationDate: CalendarDay
        public let fertileWindow: ClosedRange<CalendarDay>
        public let basis: Basis
        public let confidence: Confidence
        public let patterns: Set<Pattern>
        /// Where `today` falls in the current cycle.
        public let today: PhasePosition
    }

    public let profileCycleLength: Int
    public let profilePeriodLength: Int

    public init(profileCycleLength: Int = 28, profilePeriodLength: Int = 5) {
        self.profileCycleLength = profileCycleLength
        self.profilePeriodLength = profilePeriodLength
    }

    /// The usable cycle lengths, oldest first, from period starts in any order.
    public static func cycleLengths(_ starts: [CalendarDay]) -> [Int] {
        let sorted = Array(Set(starts)).sorted()
        let gaps = zip(sorted, sorted.dropFirst()).map { $0.days(until: $1) }.filter { (15...60).contains($0) }
        guard gaps.count >= 3 else { return Array(gaps.suffix(12)) }
        return Array(gaps.filter { gap in
            let others = gaps.filter { $0 != gap }
            return others.isEmpty || Double(gap) < 1.6 * median(others)
        }.suffix(12))
    }

    /// The prediction for `today` from `periods`; `nil` when no period has been logged.
    public func predict(periods: [Period], today: CalendarDay) -> Prediction? {
        guard let last = periods.max(by: { $0.start < $1.start }) else { return nil }
        let lengths = Self.cycleLengths(periods.map(\.start))
        let recent = lengths.suffix(6)
        let observedMean = recent.isEmpty ? Double(profileCycleLength) : Double(recent.reduce(0, +)) / Double(recent.count)
        let missing = max(0, 3 - recent.count)
        let mean = (observedMean * Double(recent.count) + Double(profileCycleLength * missing)) / Double(recent.count + missing)
        let deviation = Self.shrunkStandardDeviation(lengths)

        let bleedingDays = periods.compactMap { period in period.end.map { period.start.days(until: $0) + 1 } }.filter { (1...20).contains($0) }
        let periodLength = bleedingDays.isEmpty ? profilePeriodLength : Int((Double(bleedingDays.reduce(0, +)) / Double(bleedingDays.count)).rounded())

        let expectedLength = max(15, Int(mean.rounded()))
        let predictedStart = last.start.adding(days: expectedLength)
        // Both ends of a range of whole days are included, which adds half a day on each side: take it back.
        let spread = max(0, 1.2816 * deviation - 0.5)
        let isLate = today > predictedStart
        let nextStart = isLate ? today : predictedStart
        let rangeStart = isLate ? today : last.start.adding(days: Int((mean - spread).rounded()))
        let rangeEnd = max(rangeStart, last.start.adding(days: Int((mean + spread).rounded())))
        let ovulation = nextStart.adding(days: -Self.lutealPhaseDays)

        var patterns: Set<Pattern> = []
        if lengths.count >= 3, let shortest = lengths.min(), let longest = lengths.max(), longest - shortest >= 10 { patterns.insert(.irregular) }
        if !lengths.isEmpty && mean > 38 { patterns.insert(.infrequent) }
        if !lengths.isEmpty && mean < 24 { patterns.insert(.frequent) }
        if !bleedingDays.isEmpty && Double(bleedingDays.reduce(0, +)) / Double(bleedingDays.count) > 8 { patterns.insert(.prolonged) }

        let overdue = last.start.days(until: today) > 2 * expectedLength
        let confidence: Confidence =
            overdue || lengths.isEmpty || deviation > 6 ? .low
            : lengths.count >= 6 && deviation <= 3 && !isLate ? .high
            : .medium

        return Prediction(
            lastPeriodStart: last.start, expectedLength: expectedLength, periodLength: periodLength,
            nextPeriodStart: nextStart, nextPeriodRange: rangeStart...rangeEnd, ovulationDate: ovulation,
            fertileWindow: ovulation.adding(days: -5)...ovulation,
            basis: Basis(cyclesUsed: lengths.count, meanLength: mean, variability: deviation),
            confidence: confidence, patterns: patterns,
            today: CyclePhases.position(cycleDay: last.start.days(until: today) + 1, length: expectedLength, periodLength: periodLength)
        )
    }

    /// The sample standard deviation of `lengths`, pooled with the population's as if it were two more cycles.
    static func shrunkStandardDeviation(_ lengths: [Int]) -> Double {
        let priorWeight = 2.0
        let prior = populationStandardDeviation * populationStandardDeviation
        guard lengths.count >= 2 else { return populationStandardDeviation }
        let mean = Double(lengths.reduce(0, +)) / Double(lengths.count)
        let squares = lengths.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) }
        let degrees = Double(lengths.count - 1)
        return ((priorWeight * prior + squares) / (priorWeight + degrees)).squareRoot()
    }

    private static func median(_ values: [Int]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? Double(sorted[middle]) : Double(sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension CyclePredictor.Prediction {
    /// The day the prediction was made for.
    public var day: CalendarDay { lastPeriodStart.adding(days: today.cycleDay - 1) }

    /// Where `day` falls: the current cycle (never late before the prediction's day, as its length is not known
    /// yet) until the predicted next start, then predicted cycles of the expected length; the prediction's own day
    /// is ``today``, late or not.
    public func position(on day: CalendarDay) -> PhasePosition {
        if day == self.day { return today }
        let sinceNextStart = nextPeriodStart.days(until: day)
        if sinceNextStart >= 0 {
            return CyclePhases.position(cycleDay: sinceNextStart % expectedLength + 1, length: expectedLength, periodLength: periodLength)
        }
        let cycleDay = lastPeriodStart.days(until: day) + 1
        return CyclePhases.position(cycleDay: cycleDay, length: max(expectedLength, cycleDay), periodLength: periodLength)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The robust statistics ``CyclePredictor`` rests on: which gaps are cycles, a cycle length that outliers and drifts
/// move little, the spread of the next one, and the user's own luteal phase.
///
/// **Why these.** Candidates were compared on a generated population with the heavy tails of real charts (per-woman
/// follicular and luteal phases from Bull et al. 2019, npj Digit Med 2:83; Student-t day-to-day noise, 4 % very long
/// and 2 % short cycles, slow drifts, 4 % missed logs; `scripts/cycle-eval.sh`). Mean absolute error of the next start
/// from history alone: mean of the last six 2.76 d, the recency-weighted winsorized mean below 2.64. A prototype of
/// the same generator also tried the median of the last nine (2.67), a trimmed mean of the last eight (2.68) and a
/// constant-weight pull toward the population (worse for long histories than leaning on the profile only while there
/// are fewer than three cycles).
public enum CycleEstimates {
    /// Cycle-to-cycle standard deviation of the population (Fehring et al. 2006, JOGNN 35:376).
    public static let populationStandardDeviation = 3.4
    /// Mean luteal phase of the population, in days (Bull et al. 2019: 12.4, 95 % of cycles 7–17).
    public static let populationLutealDays = 12.4
    /// Within-woman standard deviation of the luteal phase assumed before the user's own are known: the follicular
    /// phase carries most of a cycle's variation (Bull et al. 2019; Fehring et al. 2006).
    public static let populationLutealStandardDeviation = 1.5
    /// Recency weighting: each cycle counts 0.5^(1/6) as much as the next, so half as much as one six cycles newer.
    public static let recencyFactor = 0.890_898_718_140_339_3
    /// Cycles are winsorized to the median ± this many robust standard deviations.
    public static let winsorizeAt = 2.0

    /// The usable cycle lengths, oldest first, from period starts in any order: gaps under 15 or over 60 days are not
    /// cycles, and once there are three or more, a gap at least 1.6 × the median of the others counts as a missed log
    /// (two cycles in one gap); both are ignored. The last 12 cycles are kept.
    public static func cycleLengths(_ starts: [CalendarDay]) -> [Int] {
        let sorted = Array(Set(starts)).sorted()
        let gaps = zip(sorted, sorted.dropFirst()).map { $0.days(until: $1) }.filter { (15...60).contains($0) }
        guard gaps.count >= 3 else { return Array(gaps.suffix(12)) }
        return Array(gaps.filter { gap in
            let others = gaps.filter { $0 != gap }
            return others.isEmpty || Double(gap) < 1.6 * median(others.map(Double.init))
        }.suffix(12))
    }

    /// The expected length of the next cycle: the lengths winsorized to their median ± 2 robust standard deviations
    /// (1.4826 × the median absolute deviation, at least 1.5 days), weighted by recency (half-life six cycles), and
    /// while there are fewer than three, pooled with the profile's average as if it were observed for each missing one.
    public static func expectedLength(_ lengths: [Int], profileLength: Int) -> Double {
        let values = lengths.map(Double.init)
        guard !values.isEmpty else { return Double(profileLength) }
        let middle = median(values)
        let scale = max(robustStandardDeviation(values) ?? 3.0, 1.5)
        let clipped = values.map { min(max($0, middle - winsorizeAt * scale), middle + winsorizeAt * scale) }
        var total = 0.0
        var weightSum = 0.0
        var weight = 1.0
        for value in clipped.reversed() {
            total += weight * value
            weightSum += weight
            weight *= recencyFactor
        }
        let weighted = total / weightSum
        let missing = Double(max(0, 3 - values.count))
        return (weighted * Double(values.count) + Double(profileLength) * missing) / (Double(values.count) + missing)
    }

    /// The cycle-to-cycle standard deviation: the robust one of `lengths` (at least 0.8 days, one rounding of a
    /// whole-day log), pooled with the population's as if that were two more cycles, so a short history never looks
    /// falsely regular.
    public static func lengthStandardDeviation(_ lengths: [Int]) -> Double {
        pooled(robustStandardDeviation(lengths.map(Double.init)).map { max($0, 0.8) }, count: lengths.count, prior: populationStandardDeviation)
    }

    /// The user's luteal phase from past cycles where ovulation was detected (days from ovulation to the next period):
    /// the mean of them clipped to their median ± 3 days, shrunk toward the population's 12.4 days with the weight of
    /// two cycles; and its standard deviation pooled with 1.5 days the same way.
    public static func lutealPhase(_ lengths: [Int]) -> (mean: Double, standardDeviation: Double) {
        let values = lengths.map(Double.init)
        guard !values.isEmpty else { return (populationLutealDays, populationLutealStandardDeviation) }
        let middle = median(values)
        let clipped = values.map { min(max($0, middle - 3), middle + 3) }
        let mean = (clipped.reduce(0, +) + 2 * populationLutealDays) / (Double(values.count) + 2)
        let observed = clipped.count >= 2 ? standardDeviation(clipped) : nil
        return (mean, pooled(observed.map { max($0, 0.5) }, count: values.count, prior: populationLutealStandardDeviation))
    }

    /// The weight the cycle-length evidence gets in this cycle's luteal phase when no luteal phase of the user's was
    /// measured yet; it falls as measured ones come in (calibrated, `scripts/cycle-eval.sh`).
    public static let cycleEvidenceWeight = 0.35

    /// This cycle's luteal phase once ovulation is detected, `follicular` days after the period began: the user's luteal
    /// phase (``lutealPhase(_:)``, from `measured` past cycles) and, while few were measured, what the user's cycle length
    /// says is left after this follicular phase (a woman's cycles and her follicular phases differ by her luteal phase).
    /// That second estimate is left out when it is implausible — over 4 days from the first, as after a late
    /// ovulation — and clamped to 7–17 days.
    public static func lutealLength(_ luteal: (mean: Double, standardDeviation: Double), measured: Int, cycleLength: Double?, follicular: Double) -> Double {
        guard let cycleLength else { return luteal.mean }
        let left = cycleLength - follicular
        guard abs(left - luteal.mean) <= 4 else { return luteal.mean }
        let weight = cycleEvidenceWeight * 2 / (Double(measured) + 2)
        return (1 - weight) * luteal.mean + weight * min(max(left, 7), 17)
    }

    /// `observed` (from `count` values) pooled with `prior` as if the prior were two more values.
    static func pooled(_ observed: Double?, count: Int, prior: Double) -> Double {
        guard let observed, count >= 2 else { return prior }
        let degrees = Double(count - 1)
        return ((2 * prior * prior + degrees * observed * observed) / (2 + degrees)).squareRoot()
    }

    /// 1.4826 × the median absolute deviation (the standard deviation, were the values normal); `nil` under two values.
    static func robustStandardDeviation(_ values: [Double]) -> Double? {
        guard values.count >= 2 else { return nil }
        let middle = median(values)
        return 1.4826 * median(values.map { abs($0 - middle) })
    }

    static func standardDeviation(_ values: [Double]) -> Double {
        let mean = values.reduce(0, +) / Double(values.count)
        return (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(max(values.count - 1, 1))).squareRoot()
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

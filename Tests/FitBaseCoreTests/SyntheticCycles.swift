import FitBaseCore
import Foundation

/// Generated cycle histories with the heavy tails of real charts, built from published distributions, for the
/// calibration test and `scripts/cycle-eval.sh` (which compiles this file with FitBaseCore).
///
/// * Per woman: mean follicular phase 16.9 days (SD 2.6 between women) and luteal phase 12.4 days (SD 1.3), Bull et al.
///   2019, npj Digit Med 2:83; within-woman follicular noise log-normal around 1.3 days, Student-t (5 degrees of
///   freedom) so some cycles stray far; luteal noise 0.7–1.5 days; a slow drift of the follicular phase.
/// * Tails: 4 % of cycles 6–20 days longer (a late ovulation), 2 % 3–7 days shorter, 4 % short luteal phases
///   (7–9 days); 4 % of logged starts missed, leaving a double-length gap.
/// * Signals: LH strips from cycle day 8 until the day after the first positive, a day skipped 15 % of the time, the
///   surge onset 0, 1 or 2 days before ovulation (20/60/20 %); basal temperatures 36.3 °C (SD 0.15 between women,
///   0.08 day to day) rising 0.2 °C the day after ovulation and 0.35 °C from the next, with 2 % fever days and 10 %
///   of days missed.
struct SyntheticCycles {
    /// One generated cycle: days from its first day to ovulation, and from ovulation to the next first day.
    struct Cycle {
        var follicular: Int
        var luteal: Int
        /// Days the LH surge begins before ovulation.
        var surgeLead: Int
        var length: Int { follicular + luteal }
    }

    /// One woman's chart up to the first day of the current cycle, and that cycle.
    struct Chart {
        var periods: [CyclePredictor.Period]
        /// Signals of the past cycles (the women who log them).
        var signals: [FertilitySignal]
        var current: Cycle
        var currentStart: CalendarDay
        var baseline: Double
    }

    var random: SplitMix64
    let first = CalendarDay("2024-01-01")!

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// A woman with `count` past cycles before the current one; `testsLH`/`chartsTemperature` say how often she logged
    /// those signals in past cycles (0…1).
    mutating func chart(pastCycles count: Int, testsLH: Double, chartsTemperature: Double) -> Chart {
        let follicularMean = min(max(16.9 + 2.6 * random.normal(), 10), 28)
        let lutealMean = min(max(12.4 + 1.3 * random.normal(), 9), 16)
        let follicularNoise = exp(log(1.3) + 0.5 * random.normal())
        let lutealNoise = 0.7 + 0.8 * random.unit()
        let drift = 0.12 * random.normal()
        let baseline = 36.3 + 0.15 * random.normal()
        var cycles: [Cycle] = []
        for index in 0...count {
            var follicular = follicularMean + drift * Double(index) + follicularNoise * random.studentT(degrees: 5)
            let tail = random.unit()
            if tail < 0.04 { follicular += 6 + 14 * random.unit() } else if tail < 0.06 { follicular -= 3 + 4 * random.unit() }
            var luteal = lutealMean + lutealNoise * random.normal()
            if random.unit() < 0.04 { luteal = 7 + 2.5 * random.unit() }
            let lead = random.unit()
            cycles.append(Cycle(
                follicular: max(8, Int(follicular.rounded())), luteal: min(max(Int(luteal.rounded()), 7), 17),
                surgeLead: lead < 0.2 ? 0 : lead < 0.8 ? 1 : 2
            ))
        }
        var periods: [CyclePredictor.Period] = []
        var signals: [FertilitySignal] = []
        var start = first
        for (index, cycle) in cycles.enumerated() {
            let missed = index > 0 && index < count && random.unit() < 0.04
            if !missed { periods.append(.init(start: start, end: start.adding(days: 4))) }
            if index == count { break }
            if random.unit() < testsLH { signals += lhTests(cycle, start: start, through: cycle.follicular + 1) }
            if random.unit() < chartsTemperature { signals += temperatures(cycle, start: start, baseline: baseline, through: cycle.length - 1) }
            start = start.adding(days: cycle.length)
        }
        return Chart(periods: periods, signals: signals, current: cycles[count], currentStart: start, baseline: baseline)
    }

    /// LH strips of `cycle` from cycle day 8 up to `through` days after its start (and never past the day after the
    /// first positive one).
    mutating func lhTests(_ cycle: Cycle, start: CalendarDay, through last: Int) -> [FertilitySignal] {
        let surge = cycle.follicular - cycle.surgeLead
        var tests: [FertilitySignal] = []
        var offset = max(0, min(7, surge - 2))
        var positives = 0
        while offset <= last {
            let positive = offset >= surge && offset < surge + 2
            if offset == surge || random.unit() >= 0.15 {
                tests.append(FertilitySignal(date: start.adding(days: offset), reading: .lhTest(positive ? .positive : .negative)))
                if positive { positives += 1 }
            }
            if positives >= 1 && !positive { break }
            offset += 1
        }
        return tests
    }

    /// Basal temperatures of `cycle` from its first day up to `through` days after it.
    mutating func temperatures(_ cycle: Cycle, start: CalendarDay, baseline: Double, through last: Int) -> [FertilitySignal] {
        var readings: [FertilitySignal] = []
        for offset in 0...max(0, last) where random.unit() >= 0.1 {
            let rise = offset == cycle.follicular + 1 ? 0.2 : offset > cycle.follicular + 1 ? 0.35 : 0
            let fever = random.unit() < 0.02 ? 1.2 : 0
            let value = ((baseline + rise + fever + 0.08 * random.normal()) * 100).rounded() / 100
            readings.append(FertilitySignal(date: start.adding(days: offset), reading: .basalBodyTemperature(celsius: min(max(value, 35), 38.5))))
        }
        return readings
    }
}

/// A small deterministic generator so generated populations are the same on every run.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Standard normal (Box–Muller).
    mutating func normal() -> Double {
        let u = max(unit(), 1e-12), v = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }

    /// Student's t with `degrees` degrees of freedom (a normal over the root of a scaled chi-square).
    mutating func studentT(degrees: Int) -> Double {
        let chiSquare = (0..<degrees).reduce(0.0) { sum, _ in let z = normal(); return sum + z * z }
        return normal() / (chiSquare / Double(degrees)).squareRoot()
    }
}

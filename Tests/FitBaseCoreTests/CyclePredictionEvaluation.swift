import FitBaseCore
import Foundation

/// How well ``CyclePredictor`` predicts the next start on a ``SyntheticCycles`` population, at the moments the issue
/// asks about: early in the cycle (day 3, before any sign of ovulation), the day the first positive LH test is logged
/// (with and without a past luteal phase of her own), and the day after a basal temperature rise is confirmed.
struct CyclePredictionEvaluation {
    /// Accuracy of one way of predicting.
    struct Figures: CustomStringConvertible {
        var count = 0
        var absoluteError = 0
        var withinTwo = 0
        var covered = 0
        var width = 0
        /// How many predictions came from a detected ovulation.
        var fromOvulation = 0

        var meanAbsoluteError: Double { Double(absoluteError) / Double(max(count, 1)) }
        var withinTwoShare: Double { Double(withinTwo) / Double(max(count, 1)) }
        var coverage: Double { Double(covered) / Double(max(count, 1)) }
        var meanWidth: Double { Double(width) / Double(max(count, 1)) }

        mutating func add(predicted: CalendarDay, range: ClosedRange<CalendarDay>?, actual: CalendarDay, fromOvulation: Bool = false) {
            let error = abs(predicted.days(until: actual))
            count += 1
            absoluteError += error
            if error <= 2 { withinTwo += 1 }
            if let range {
                if range.contains(actual) { covered += 1 }
                width += range.lowerBound.days(until: range.upperBound) + 1
            }
            if fromOvulation { self.fromOvulation += 1 }
        }

        var description: String {
            let accuracy = String(format: "n %5d  MAE %.2f d  within ±2 d %.1f %%", count, meanAbsoluteError, 100 * withinTwoShare)
            guard width > 0 else { return accuracy }
            return accuracy + String(format: "  80 %% range covers %.1f %% at %.1f d wide  (%d from a detected ovulation)", 100 * coverage, meanWidth, fromOvulation)
        }
    }

    var beforeOvulation = Figures()
    var afterLHSurge = Figures()
    var afterFirstLHSurge = Figures()
    var afterTemperatureRise = Figures()
    var plainMean = Figures()
    var calendar28 = Figures()

    /// Runs `women` generated charts from `seed`.
    static func run(women: Int, seed: UInt64) -> CyclePredictionEvaluation {
        var generator = SyntheticCycles(seed: seed)
        var result = CyclePredictionEvaluation()
        let predictor = CyclePredictor()
        for index in 0..<women {
            let pastCycles = 3 + index % 11
            let chart = generator.chart(pastCycles: pastCycles, testsLH: 0.6, chartsTemperature: 0.3)
            let start = chart.currentStart
            let actual = start.adding(days: chart.current.length)
            let early = start.adding(days: 2)
            if let prediction = predictor.predict(periods: chart.periods, signals: chart.signals, today: early) {
                result.beforeOvulation.add(predicted: prediction.nextPeriodStart, range: prediction.nextPeriodRange, actual: actual)
            }
            let lengths = CyclePredictor.cycleLengths(chart.periods.map(\.start)).suffix(6)
            let mean = lengths.isEmpty ? 28 : Int((Double(lengths.reduce(0, +)) / Double(lengths.count)).rounded())
            result.plainMean.add(predicted: start.adding(days: mean), range: nil, actual: actual)
            result.calendar28.add(predicted: start.adding(days: 28), range: nil, actual: actual)

            let surgeDay = chart.current.follicular - chart.current.surgeLead
            let tests = generator.lhTests(chart.current, start: start, through: surgeDay)
            let surgeToday = start.adding(days: surgeDay)
            if let prediction = predictor.predict(periods: chart.periods, signals: chart.signals + tests, today: surgeToday) {
                result.afterLHSurge.add(
                    predicted: prediction.nextPeriodStart, range: prediction.nextPeriodRange, actual: actual, fromOvulation: prediction.basis.method == .ovulation
                )
            }
            if let prediction = predictor.predict(periods: chart.periods, signals: tests, today: surgeToday) {
                result.afterFirstLHSurge.add(
                    predicted: prediction.nextPeriodStart, range: prediction.nextPeriodRange, actual: actual, fromOvulation: prediction.basis.method == .ovulation
                )
            }
            let riseConfirmed = chart.current.follicular + 4
            let temperatures = generator.temperatures(chart.current, start: start, baseline: chart.baseline, through: riseConfirmed)
            if let prediction = predictor.predict(periods: chart.periods, signals: chart.signals + temperatures, today: start.adding(days: riseConfirmed)) {
                result.afterTemperatureRise.add(
                    predicted: prediction.nextPeriodStart, range: prediction.nextPeriodRange, actual: actual, fromOvulation: prediction.basis.method == .ovulation
                )
            }
        }
        return result
    }

    var report: String {
        """
        fixed 28-day calendar:                      \(calendar28)
        plain mean of the last six cycles:          \(plainMean)
        before ovulation (cycle day 3):             \(beforeOvulation)
        after an LH surge (60 % of past cycles LH): \(afterLHSurge)
        after a first-ever LH surge:                \(afterFirstLHSurge)
        after a basal temperature rise (day +3):    \(afterTemperatureRise)
        """
    }
}

import FitBaseCore
import Testing

@Suite struct OvulationDetectorTests {
    private let start = CalendarDay("2026-03-01")!

    private func day(_ offset: Int) -> CalendarDay { start.adding(days: offset) }

    private func lh(_ results: [Int: LHTestResult]) -> [FertilitySignal] {
        results.map { FertilitySignal(date: day($0.key), reading: .lhTest($0.value)) }
    }

    private func basal(_ readings: [Int: Double]) -> [FertilitySignal] {
        readings.map { FertilitySignal(date: day($0.key), reading: .basalBodyTemperature(celsius: $0.value)) }
    }

    private func wrist(_ readings: [Int: Double]) -> [FertilitySignal] {
        readings.map { FertilitySignal(date: day($0.key), reading: .wristTemperature(deviationCelsius: $0.value)) }
    }

    /// Waking temperatures of a cycle: low (36.3 °C, wobbling ±0.05) through `lastLow`, then high (36.7 °C) to day 27.
    private func chart(lastLow: Int, skipping skipped: Set<Int> = []) -> [Int: Double] {
        var readings: [Int: Double] = [:]
        for offset in 0...27 where !skipped.contains(offset) {
            readings[offset] = offset <= lastLow ? 36.3 + (offset % 3 == 0 ? 0.05 : offset % 3 == 1 ? -0.05 : 0) : 36.7
        }
        return readings
    }

    private func detect(_ signals: [FertilitySignal], through last: Int = 27) -> OvulationDetector.Detection? {
        OvulationDetector.detect(in: signals, cycleStart: start, through: day(last))
    }

    @Test func aCleanSurgePutsOvulationTheDayAfterTheFirstPositive() throws {
        let detection = try #require(detect(lh([9: .negative, 10: .negative, 11: .negative, 12: .positive, 13: .positive, 14: .negative])))
        #expect(detection.date == day(13))
        #expect(detection.method == .lhSurge)
        #expect(detection.signals == [.lhTest])
    }

    @Test func aPositiveAsTheCyclesFirstTestCountsAndIndeterminateResultsAreIgnored() throws {
        #expect(try #require(detect(lh([14: .positive, 15: .negative]))).date == day(15))
        #expect(try #require(detect(lh([10: .negative, 11: .indeterminate, 12: .positive]))).date == day(13))
        // Two strips one day: the positive wins.
        #expect(try #require(detect(lh([10: .negative]) + [.init(date: day(11), reading: .lhTest(.negative)), .init(date: day(11), reading: .lhTest(.positive))])).date == day(12))
    }

    @Test func ofTwoSurgesTheLaterWinsUnlessTemperatureConfirmsTheFirst() throws {
        let tests = lh([8: .negative, 9: .positive, 10: .negative, 11: .negative, 14: .negative, 16: .negative, 17: .positive, 18: .negative])
        #expect(OvulationDetector.lhSurges(tests) == [day(9), day(17)])
        let alone = try #require(detect(tests))
        #expect(alone.date == day(18))
        #expect(alone.reason.contains("later of 2"))
        let confirmed = try #require(detect(tests + basal(chart(lastLow: 10))))
        #expect(confirmed.date == day(10))
        #expect(confirmed.method == .lhSurge)
        #expect(confirmed.signals == [.lhTest, .basalBodyTemperature])
    }

    @Test func noSurgeNoOvulation() {
        #expect(detect(lh([8: .negative, 9: .negative, 10: .indeterminate, 11: .negative])) == nil)
        #expect(detect([]) == nil)
        // A positive after the cycle's last day belongs to another cycle.
        #expect(detect(lh([10: .negative, 30: .positive])) == nil)
    }

    @Test func threeOverSixDatesOvulationOnTheLastLowDay() throws {
        let detection = try #require(detect(basal(chart(lastLow: 14))))
        #expect(detection.date == day(14))
        #expect(detection.method == .basalTemperatureShift)
        #expect(detection.signals == [.basalBodyTemperature])
        // Only two high readings so far: not yet confirmed.
        #expect(detect(basal(chart(lastLow: 14)), through: 16) == nil)
        #expect(try #require(detect(basal(chart(lastLow: 14)), through: 17)).date == day(14))
    }

    @Test func noisyTemperaturesNeedTheRiseToHold() throws {
        // Readings that wander ±0.25 °C without a sustained rise: never three over six by 0.2.
        let wandering = [36.3, 36.5, 36.2, 36.4, 36.25, 36.55, 36.3, 36.6, 36.35, 36.5, 36.3, 36.6, 36.4, 36.45, 36.3, 36.5]
        #expect(detect(basal(Dictionary(uniqueKeysWithValues: wandering.enumerated().map { ($0.offset, $0.element) }))) == nil)
        // A small rise: the third high only 0.1 above the cover line, so a fourth above it confirms (the first exception).
        var small = chart(lastLow: 11)
        for offset in 12...27 { small[offset] = 36.45 }
        #expect(detect(basal(small), through: 14) == nil)
        #expect(try #require(detect(basal(small), through: 15)).date == day(11))
        // A reading that dips below the cover line breaks the run: the rise counts from after it, over a cover line that
        // now holds the first warm reading.
        var dip = chart(lastLow: 11)
        dip[12] = 36.6
        dip[13] = 36.3
        for offset in 14...27 { dip[offset] = 36.8 }
        #expect(try #require(detect(basal(dip))).date == day(13))
    }

    @Test func aFeverDayIsLeftOut() throws {
        var fever = chart(lastLow: 14)
        fever[8] = 38.1
        #expect(try #require(detect(basal(fever))).date == day(14))
        // A fever alone is no rise.
        var feverOnly = chart(lastLow: 27)
        feverOnly[12] = 37.9
        feverOnly[13] = 38.2
        feverOnly[14] = 37.8
        #expect(detect(basal(feverOnly)) == nil)
        // A lone spike (a late night, a drink) in the low phase does not raise the cover line.
        var spike = chart(lastLow: 14)
        spike[10] = 36.9
        #expect(try #require(detect(basal(spike))).date == day(14))
    }

    @Test func aMissingWeekBeforeTheRiseIsFineButAcrossItTheDayIsUnknown() throws {
        #expect(try #require(detect(basal(chart(lastLow: 14, skipping: Set(3...9))))).date == day(14))
        #expect(detect(basal(chart(lastLow: 14, skipping: Set(11...17)))) == nil)
        // LH still dates it when the thermometer was away.
        #expect(try #require(detect(basal(chart(lastLow: 14, skipping: Set(11...17))) + lh([12: .negative, 13: .positive]))).date == day(14))
    }

    @Test func wristTemperatureDeviationsHaveTheirOwnThreshold() throws {
        var nights: [Int: Double] = [:]
        for offset in 0...27 { nights[offset] = offset <= 15 ? (offset % 2 == 0 ? -0.1 : 0.05) : 0.3 }
        let detection = try #require(detect(wrist(nights)))
        #expect(detection.date == day(15))
        #expect(detection.method == .wristTemperatureShift)
        // One warm night is not a rise.
        var oneWarm: [Int: Double] = [:]
        for offset in 0...27 { oneWarm[offset] = offset == 12 ? 0.6 : -0.05 }
        #expect(detect(wrist(oneWarm)) == nil)
        // Basal temperature wins over the wrist when they disagree.
        let both = try #require(detect(wrist(nights) + basal(chart(lastLow: 12))))
        #expect(both.method == .basalTemperatureShift)
        #expect(both.date == day(12))
    }

    @Test func aTemperatureRiseFarFromTheSurgeWins() throws {
        let detection = try #require(detect(lh([8: .negative, 9: .positive, 10: .negative]) + basal(chart(lastLow: 16))))
        #expect(detection.date == day(16))
        #expect(detection.method == .basalTemperatureShift)
        #expect(detection.reason.contains("did not lead to ovulation"))
    }
}

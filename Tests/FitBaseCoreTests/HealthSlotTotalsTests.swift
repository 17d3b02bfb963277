import Foundation
import Testing

@testable import FitBaseCore

/// Slot totals stand in for the samples that count by their start, and a summary made with them equals the one made
/// from every sample — in any time zone, over any range, with every kind of sample mixed in.
@Suite struct HealthSlotTotalsTests {
    private let zones = ["UTC", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "Europe/Amsterdam"]
        .map { TimeZone(identifier: $0)! }

    /// Samples of every type between `from` and `to`, at random instants (some on slot edges), with whole-number
    /// values so sums do not depend on the order they are added in.
    private func randomSamples(from: Date, to: Date, count: Int, using generator: inout some RandomNumberGenerator) -> [HealthSample] {
        let span = to.timeIntervalSince(from)
        return (0..<count).map { index in
            var start = from.addingTimeInterval(Double.random(in: -7_200..<span, using: &generator).rounded())
            if index % 7 == 0 { start = HealthSlots.start(of: HealthSlots.slot(of: start)) }
            let value: HealthValue
            var end: Date?
            switch index % 6 {
            case 0: value = .heartRate(beatsPerMinute: Double(Int.random(in: 40...190, using: &generator)))
            case 1: value = .oxygenSaturation(percent: Double(Int.random(in: 88...100, using: &generator)))
            case 2: value = .bloodPressure(systolic: Double(Int.random(in: 95...160, using: &generator)), diastolic: Double(Int.random(in: 55...100, using: &generator)))
            case 3:
                value = .steps(count: Double(Int.random(in: 0...400, using: &generator)))
                end = index % 4 == 0 ? start : nil
            case 4:
                value = .steps(count: Double(Int.random(in: 0...4_000, using: &generator)))
                end = start.addingTimeInterval(Double(Int.random(in: 60...7_200, using: &generator)))
            default:
                value = .sleep(stage: SleepStage.allCases.randomElement(using: &generator)!)
                end = start.addingTimeInterval(Double(Int.random(in: 300...20_000, using: &generator)))
            }
            return HealthSample(id: HealthSampleID(), value: value, start: start, end: end, sourceId: "test")
        }
    }

    /// The totals of every slot, from the samples that count by their start.
    private func totals(of samples: [HealthSample], type: HealthSampleType) -> [Int64: HealthSlotTotals] {
        var totals: [Int64: HealthSlotTotals] = [:]
        for sample in samples where sample.type == type {
            totals[HealthSlots.slot(of: sample.start), default: HealthSlotTotals()].add(sample.value, start: sample.start, end: sample.end)
        }
        return totals.filter { !$0.value.isEmpty }
    }

    private func rounded(_ buckets: [HealthSummaryBucket]) -> [HealthSummaryBucket] {
        buckets.map { bucket in
            var bucket = bucket
            bucket.sum = bucket.sum.map { ($0 * 1e6).rounded() / 1e6 }
            return bucket
        }
    }

    @Test func summariesFromSlotTotalsEqualSummariesFromEverySample() {
        var generator = SplitMix(state: 0x5EED_2026)
        let base = Date(timeIntervalSince1970: 1_772_000_000)  // early 2026, before the northern spring clock change
        let localMeanTime = Date(timeIntervalSince1970: -2_500_000_000)  // 1890: Amsterdam's midnights cut slots
        for zone in zones {
            for round in 0..<7 {
                // Ranges from under a slot to two months, starting anywhere (mid-slot, mid-second).
                let from = (round == 6 ? localMeanTime : base).addingTimeInterval(Double.random(in: 0..<90 * 86_400, using: &generator))
                let to = from.addingTimeInterval([600, 3_600, 86_400 * 3, 86_400 * 61].randomElement(using: &generator)!)
                let samples = randomSamples(from: from, to: to, count: 600, using: &generator)
                for type in HealthSampleType.allCases {
                    for bucket in HealthSummaryBucketSize.allCases {
                        let expected = HealthSummarizer.summarize(samples, type: type, bucket: bucket, timeZone: zone, from: from, to: to)
                        let summed = HealthSummarizer.summarize(
                            samples, slotTotals: totals(of: samples, type: type), type: type, bucket: bucket, timeZone: zone, from: from, to: to
                        )
                        // Pro-rated steps are fractions, summed in another order: equal to the last few bits.
                        #expect(rounded(summed) == rounded(expected), "\(type) by \(bucket) in \(zone.identifier) from \(from) to \(to)")
                    }
                }
            }
        }
    }

    @Test func theSamplesOfUsedSlotsAreTakenFromTheTotalsAlone() {
        let zone = TimeZone(identifier: "UTC")!
        let from = Date(timeIntervalSince1970: 1_780_000_400)  // mid-slot
        let to = from.addingTimeInterval(86_400)
        let inside = HealthSample(id: HealthSampleID(), value: .heartRate(beatsPerMinute: 70), start: from.addingTimeInterval(3_600), sourceId: "test")
        var totals = HealthSlotTotals()
        totals.add(.heartRate(beatsPerMinute: 100), start: inside.start, end: nil)
        let buckets = HealthSummarizer.summarize(
            [inside], slotTotals: [HealthSlots.slot(of: inside.start): totals], type: .heartRate, bucket: .day, timeZone: zone, from: from, to: to
        )
        // The sample lies in a slot the totals cover: the totals count, the sample does not.
        #expect(buckets.map(\.value) == [HealthStatistic(count: 1, min: 100, max: 100, average: 100)])
    }

    @Test func thePlanReadsSamplesWhereTheRangeOrABucketEdgeCutsASlot() throws {
        let utc = TimeZone(identifier: "UTC")!
        let from = Date(timeIntervalSince1970: 1_780_000_400)  // 200 s into a slot
        let slot = HealthSlots.slot(of: from)
        let to = HealthSlots.start(of: slot + 200).addingTimeInterval(30)
        let plan = HealthSummarizer.plan(bucket: .day, timeZone: utc, from: from, to: to)
        let firstWhole = HealthSlots.start(of: slot) < from ? slot + 1 : slot
        #expect(plan.slots == firstWhole..<(slot + 200))
        #expect(plan.excluded.isEmpty)
        #expect(plan.sampleRanges.map(\.upper).last == to)

        // Amsterdam kept local mean time (UTC+0:19:32) until 1909: its midnights cut slots.
        let amsterdam = TimeZone(identifier: "Europe/Amsterdam")!
        let old = Date(timeIntervalSince1970: -2_500_000_000)  // 1890
        let oldPlan = HealthSummarizer.plan(bucket: .day, timeZone: amsterdam, from: old, to: old.addingTimeInterval(5 * 86_400))
        #expect(oldPlan.excluded.count >= 4)
        for excluded in oldPlan.excluded {
            #expect(!oldPlan.usesTotals(of: excluded))
            #expect(oldPlan.sampleRanges.contains { $0.lower == HealthSlots.start(of: excluded) })
        }
        // Under one whole slot: every sample is read.
        let short = HealthSummarizer.plan(bucket: .day, timeZone: utc, from: from, to: from.addingTimeInterval(300))
        #expect(short.slots.isEmpty)
        #expect(short.sampleRanges.count == 1)
    }

    @Test func onlySamplesThatCountByTheirStartEnterTotals() {
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        var totals = HealthSlotTotals()
        let added = [
            totals.add(.heartRate(beatsPerMinute: 60), start: now, end: now.addingTimeInterval(60)),
            totals.add(.steps(count: 10), start: now, end: now),
            totals.add(.steps(count: 10), start: now, end: now.addingTimeInterval(60)),
            totals.add(.sleep(stage: .asleepCore), start: now, end: now.addingTimeInterval(600)),
        ]
        #expect(added == [true, true, false, false])
        #expect(totals.sampleCount == 2)
        #expect(totals.sum == 10)
    }
}

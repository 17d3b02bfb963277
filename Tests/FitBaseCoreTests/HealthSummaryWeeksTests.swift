import Foundation
import Testing

@testable import FitBaseCore

/// Day buckets gathered into weeks equal the summarizer's own week buckets over the same local days.
@Suite struct HealthSummaryWeeksTests {
    private let berlin = TimeZone(identifier: "Europe/Berlin")!

    private func sample(_ value: HealthValue, hoursAfter hours: Double, lasting seconds: TimeInterval? = nil) -> HealthSample {
        // 2026-10-19T00:00 in Berlin (a Monday), so the days run across the end of summer time on the 25th.
        let start = Date(timeIntervalSince1970: 1_792_360_800 + hours * 3_600)
        return HealthSample(id: HealthSampleID(), value: value, start: start, end: seconds.map { start.addingTimeInterval($0) }, sourceId: "test")
    }

    @Test(arguments: HealthSampleType.allCases)
    func weeksOfDaysAreTheSummarizersWeeks(type: HealthSampleType) {
        var samples: [HealthSample] = []
        for hour in stride(from: 5.0, to: 24 * 20, by: 7) {
            let wobble = hour.truncatingRemainder(dividingBy: 13)
            switch type {
            case .heartRate: samples.append(sample(.heartRate(beatsPerMinute: 55 + wobble), hoursAfter: hour))
            case .oxygenSaturation: samples.append(sample(.oxygenSaturation(percent: 90 + wobble / 2), hoursAfter: hour))
            case .bloodPressure: samples.append(sample(.bloodPressure(systolic: 110 + wobble, diastolic: 70 + wobble / 2), hoursAfter: hour))
            // Intervals that cross local midnight: split by time, so the totals match whatever the buckets.
            case .steps: samples.append(sample(.steps(count: 1_000 + wobble), hoursAfter: hour, lasting: 5 * 3_600))
            case .sleep: samples.append(sample(.sleep(stage: wobble > 6 ? .asleepDeep : .awake), hoursAfter: hour, lasting: 4 * 3_600))
            }
        }
        let from = Date(timeIntervalSince1970: 1_792_360_800 + 2 * 86_400)  // a Wednesday: the first week starts cut short
        let to = from.addingTimeInterval(16 * 86_400)
        let days = HealthSummarizer.summarize(samples, type: type, bucket: .day, timeZone: berlin, from: from, to: to)
        let weeks = HealthSummarizer.summarize(samples, type: type, bucket: .week, timeZone: berlin, from: from, to: to)
        let merged = HealthSummaryBucket.weeks(of: days)
        #expect(merged.map(\.start) == weeks.map(\.start))
        for (mine, theirs) in zip(merged, weeks) {
            #expect(close(mine.value, theirs.value) && close(mine.systolic, theirs.systolic) && close(mine.diastolic, theirs.diastolic))
            #expect(close(mine.sum, theirs.sum) && close(mine.asleepSeconds, theirs.asleepSeconds))
            for stage in SleepStage.allCases { #expect(close(mine.sleepSeconds?[stage], theirs.sleepSeconds?[stage])) }
            // Point samples count once either way; an interval counts once per day it touched.
            if type == .steps || type == .sleep { #expect(mine.sampleCount >= theirs.sampleCount) } else { #expect(mine.sampleCount == theirs.sampleCount) }
        }
    }

    @Test func statisticsMergeByCount() {
        let one = HealthStatistic(count: 1, min: 60, max: 60, average: 60)
        let three = HealthStatistic(count: 3, min: 70, max: 90, average: 80)
        #expect(one.merged(with: three) == HealthStatistic(count: 4, min: 60, max: 90, average: 75))
        let none = HealthStatistic(count: 0, min: 0, max: 0, average: 0)
        #expect(none.merged(with: none) == none)
        #expect(HealthSummaryBucket.weeks(of: []).isEmpty)
    }

    @Test func metadataIsCutToWhatASampleMayCarry() throws {
        var metadata = Dictionary(uniqueKeysWithValues: (0..<30).map { (String(format: "key%02d", $0), "v") })
        metadata[String(repeating: "k", count: 65)] = "too long a key"
        metadata["key00"] = String(repeating: "x", count: 600)
        let fitted = try #require(HealthSampleValidator.fitting(metadata: metadata))
        #expect(fitted.count == 20 && fitted.keys.sorted().first == "key00" && fitted.keys.sorted().last == "key19")
        #expect(fitted["key00"]?.count == 500)
        #expect(HealthSampleValidator.fitting(metadata: ["": "empty key"]) == nil)
        let input = HealthSampleInput(id: UUID().uuidString, type: "heartRate", value: 60, start: Date(timeIntervalSince1970: 1_792_360_800), sourceId: "s", metadata: fitted)
        #expect((try? HealthSampleValidator.validate(input, now: Date(timeIntervalSince1970: 1_792_360_900)).get()) != nil)
    }

    private func close(_ one: HealthStatistic?, _ two: HealthStatistic?) -> Bool {
        guard let one, let two else { return one == nil && two == nil }
        return one.count == two.count && one.min == two.min && one.max == two.max && abs(one.average - two.average) < 1e-9
    }

    private func close(_ one: Double?, _ two: Double?) -> Bool {
        guard let one, let two else { return one == nil && two == nil }
        return abs(one - two) < 1e-6
    }
}

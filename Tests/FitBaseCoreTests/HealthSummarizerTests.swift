import Foundation
import Testing

@testable import FitBaseCore

@Suite struct HealthSummarizerTests {
    private let newYork = TimeZone(identifier: "America/New_York")!
    private let kolkata = TimeZone(identifier: "Asia/Kolkata")!
    private let kathmandu = TimeZone(identifier: "Asia/Kathmandu")!
    private let utc = TimeZone(identifier: "UTC")!

    /// The instant of local wall-clock time `text` (`YYYY-MM-DD HH:mm`) in `zone`.
    private func local(_ text: String, _ zone: TimeZone) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.date(from: text)!
    }

    private func sample(_ value: HealthValue, _ start: Date, _ end: Date? = nil) -> HealthSample {
        HealthSample(id: HealthSampleID(), value: value, start: start, end: end, sourceId: "test")
    }

    private func summary(
        _ samples: [HealthSample], _ type: HealthSampleType, _ zone: TimeZone, _ from: String, _ to: String,
        bucket: HealthSummaryBucketSize = .day
    ) -> [HealthSummaryBucket] {
        HealthSummarizer.summarize(
            samples, type: type, bucket: bucket, timeZone: zone, from: local(from, zone), to: local(to, zone))
    }

    private func day(_ text: String) -> CalendarDay { CalendarDay(text)! }

    @Test func heartRateGetsMinMaxAverageAndCountPerDayWithEmptyDaysLeftOut() {
        let samples = [
            sample(.heartRate(beatsPerMinute: 100), local("2026-05-10 21:00", newYork)),
            sample(.heartRate(beatsPerMinute: 60), local("2026-05-10 08:00", newYork)),
            sample(.steps(count: 500), local("2026-05-10 09:00", newYork), local("2026-05-10 09:10", newYork)),
            sample(.heartRate(beatsPerMinute: 55), local("2026-05-12 23:59", newYork)),
            sample(.heartRate(beatsPerMinute: 80), local("2026-05-10 00:00", newYork)),
        ]
        let buckets = summary(samples, .heartRate, newYork, "2026-05-10 00:00", "2026-05-14 00:00")
        #expect(
            buckets == [
                HealthSummaryBucket(
                    start: day("2026-05-10"), sampleCount: 3,
                    value: HealthStatistic(count: 3, min: 60, max: 100, average: 80)),
                HealthSummaryBucket(
                    start: day("2026-05-12"), sampleCount: 1,
                    value: HealthStatistic(count: 1, min: 55, max: 55, average: 55)),
            ])
    }

    @Test func oxygenSaturationAndBloodPressureGetStatistics() {
        let pressures = [
            sample(.bloodPressure(systolic: 120, diastolic: 80), local("2026-05-10 07:00", utc)),
            sample(.bloodPressure(systolic: 135, diastolic: 88), local("2026-05-10 19:00", utc)),
            sample(.bloodPressure(systolic: 114, diastolic: 72), local("2026-05-10 23:00", utc)),
        ]
        let buckets = summary(pressures, .bloodPressure, utc, "2026-05-10 00:00", "2026-05-11 00:00")
        #expect(buckets.count == 1)
        #expect(buckets.first?.sampleCount == 3)
        #expect(buckets.first?.systolic == HealthStatistic(count: 3, min: 114, max: 135, average: 123))
        #expect(buckets.first?.diastolic == HealthStatistic(count: 3, min: 72, max: 88, average: 80))
        #expect(buckets.first?.value == nil && buckets.first?.sum == nil && buckets.first?.sleepSeconds == nil)

        let oxygen = [96.0, 98, 99].map { sample(.oxygenSaturation(percent: $0), local("2026-05-10 03:00", utc)) }
        let spo2 = summary(oxygen, .oxygenSaturation, utc, "2026-05-10 00:00", "2026-05-11 00:00")
        #expect(spo2.map(\.value) == [HealthStatistic(count: 3, min: 96, max: 99, average: 97.66666666666667)])
    }

    @Test func stepsAreSplitAtMidnightInProportionToTime() {
        let samples = [
            sample(.steps(count: 900), local("2026-05-10 23:50", newYork), local("2026-05-11 00:20", newYork)),
            sample(.steps(count: 7), local("2026-05-11 00:00", newYork), local("2026-05-11 00:00", newYork)),
            sample(.steps(count: 3), local("2026-05-10 12:00", newYork), local("2026-05-11 00:00", newYork)),
        ]
        let buckets = summary(samples, .steps, newYork, "2026-05-10 00:00", "2026-05-12 00:00")
        #expect(buckets.map(\.start) == [day("2026-05-10"), day("2026-05-11")])
        #expect(buckets.map(\.sum) == [303, 607])
        #expect(buckets.map(\.sampleCount) == [2, 2])
    }

    @Test func stepsOnNewYorkDaylightSavingDaysStayOnTheirLocalDay() {
        let fall = sample(.steps(count: 2500), local("2026-11-01 00:00", newYork), local("2026-11-02 00:00", newYork))
        #expect(fall.end!.timeIntervalSince(fall.start) == 25 * 3600)
        #expect(
            summary([fall], .steps, newYork, "2026-10-31 00:00", "2026-11-03 00:00")
                == [HealthSummaryBucket(start: day("2026-11-01"), sampleCount: 1, sum: 2500)])

        let spring = sample(.steps(count: 2300), local("2026-03-08 00:00", newYork), local("2026-03-09 00:00", newYork))
        #expect(spring.end!.timeIntervalSince(spring.start) == 23 * 3600)
        #expect(
            summary([spring], .steps, newYork, "2026-03-07 00:00", "2026-03-10 00:00")
                == [HealthSummaryBucket(start: day("2026-03-08"), sampleCount: 1, sum: 2300)])
    }

    @Test func sleepIsSplitByRealElapsedSecondsAcrossDaylightSavingChanges() {
        // The clock skips 02:00–03:00 on 2026-03-08: 23:00 → 07:00 is 7 real hours, 1 before midnight.
        let spring = sample(
            .sleep(stage: .asleepCore), local("2026-03-07 23:00", newYork), local("2026-03-08 07:00", newYork))
        let springBuckets = summary([spring], .sleep, newYork, "2026-03-07 00:00", "2026-03-09 00:00")
        #expect(springBuckets.map(\.start) == [day("2026-03-07"), day("2026-03-08")])
        #expect(springBuckets.map(\.sleepSeconds) == [[.asleepCore: 3600], [.asleepCore: 6 * 3600]])
        #expect(springBuckets.map(\.asleepSeconds) == [3600, 6 * 3600])

        // The clock repeats 01:00–02:00 on 2026-11-01: 23:00 → 07:00 is 9 real hours, 1 before midnight.
        let fall = sample(
            .sleep(stage: .asleepDeep), local("2026-10-31 23:00", newYork), local("2026-11-01 07:00", newYork))
        let fallBuckets = summary([fall], .sleep, newYork, "2026-10-31 00:00", "2026-11-02 00:00")
        #expect(fallBuckets.map(\.sleepSeconds) == [[.asleepDeep: 3600], [.asleepDeep: 8 * 3600]])
    }

    @Test func sleepTotalsEveryStageSeenAndOnlyAsleepStagesAsAsleep() {
        let night = [
            sample(.sleep(stage: .inBed), local("2026-05-10 22:00", utc), local("2026-05-11 06:30", utc)),
            sample(.sleep(stage: .asleepCore), local("2026-05-10 22:30", utc), local("2026-05-11 01:00", utc)),
            sample(.sleep(stage: .awake), local("2026-05-11 01:00", utc), local("2026-05-11 01:15", utc)),
            sample(.sleep(stage: .asleepREM), local("2026-05-11 01:15", utc), local("2026-05-11 02:00", utc)),
            sample(.sleep(stage: .asleepUnspecified), local("2026-05-11 03:00", utc), local("2026-05-11 03:00", utc)),
        ]
        let buckets = summary(night, .sleep, utc, "2026-05-10 00:00", "2026-05-12 00:00")
        #expect(buckets.map(\.sampleCount) == [2, 4])
        #expect(
            buckets.map(\.sleepSeconds) == [
                [.inBed: 7200, .asleepCore: 5400], [.inBed: 23_400, .asleepCore: 3600, .awake: 900, .asleepREM: 2700],
            ])
        #expect(buckets.map(\.asleepSeconds) == [5400, 6300])
    }

    @Test func halfAndQuarterHourTimeZonesStartDaysAtTheirOwnMidnight() {
        // Local midnight of 2026-05-10 is 18:30Z (Kolkata, +5:30) and 18:15Z (Kathmandu, +5:45) on the 9th.
        let before = Date(timeIntervalSince1970: 1_778_350_500 - 1)  // 2026-05-09T18:14:59Z
        let kathmanduMidnight = Date(timeIntervalSince1970: 1_778_350_500)  // 2026-05-09T18:15:00Z
        let kolkataMidnight = Date(timeIntervalSince1970: 1_778_351_400)  // 2026-05-09T18:30:00Z
        #expect(local("2026-05-10 00:00", kathmandu) == kathmanduMidnight)
        #expect(local("2026-05-10 00:00", kolkata) == kolkataMidnight)
        let beats = [
            sample(.heartRate(beatsPerMinute: 61), before),
            sample(.heartRate(beatsPerMinute: 62), kathmanduMidnight),
            sample(.heartRate(beatsPerMinute: 63), kolkataMidnight.addingTimeInterval(-1)),
            sample(.heartRate(beatsPerMinute: 64), kolkataMidnight),
        ]
        let steps = [
            sample(.steps(count: 400), before.addingTimeInterval(-899), kolkataMidnight.addingTimeInterval(1800))
        ]
        let from = "2026-05-09 00:00"
        let to = "2026-05-11 00:00"

        let inKathmandu = summary(beats, .heartRate, kathmandu, from, to)
        #expect(inKathmandu.map(\.start) == [day("2026-05-09"), day("2026-05-10")])
        #expect(inKathmandu.map(\.value?.max) == [61, 64])
        #expect(summary(steps, .steps, kathmandu, from, to).map(\.sum) == [100, 300])  // 18:00Z–19:00Z

        let inKolkata = summary(beats, .heartRate, kolkata, from, to)
        #expect(inKolkata.map(\.value?.count) == [3, 1])
        #expect(inKolkata.map(\.value?.max) == [63, 64])
        #expect(summary(steps, .steps, kolkata, from, to).map(\.sum) == [200, 200])
    }

    @Test func weekBucketsStartOnMonday() {
        let samples = [
            sample(.heartRate(beatsPerMinute: 70), local("2026-11-15 23:59", newYork)),  // Sunday
            sample(.heartRate(beatsPerMinute: 72), local("2026-11-16 00:00", newYork)),  // Monday
            sample(.heartRate(beatsPerMinute: 74), local("2026-11-22 12:00", newYork)),  // Sunday
            sample(.heartRate(beatsPerMinute: 76), local("2026-11-23 00:01", newYork)),  // Monday
        ]
        let buckets = summary(samples, .heartRate, newYork, "2026-11-11 00:00", "2026-11-30 00:00", bucket: .week)
        #expect(buckets.map(\.start) == [day("2026-11-09"), day("2026-11-16"), day("2026-11-23")])
        #expect(buckets.map(\.value?.average) == [70, 73, 76])

        let sleep = sample(
            .sleep(stage: .asleepCore), local("2026-11-22 23:00", newYork), local("2026-11-23 06:00", newYork))
        let sleepWeeks = summary([sleep], .sleep, newYork, "2026-11-01 00:00", "2026-12-01 00:00", bucket: .week)
        #expect(sleepWeeks.map(\.start) == [day("2026-11-16"), day("2026-11-23")])
        #expect(sleepWeeks.map(\.asleepSeconds) == [3600, 6 * 3600])
    }

    @Test func samplesAreClippedToTheRequestedRange() {
        let from = "2026-05-10 06:00"
        let to = "2026-05-11 12:00"
        let beats = [
            sample(.heartRate(beatsPerMinute: 50), local("2026-05-10 05:59", utc)),
            sample(.heartRate(beatsPerMinute: 60), local(from, utc)),
            sample(.heartRate(beatsPerMinute: 70), local("2026-05-11 11:59", utc)),
            sample(.heartRate(beatsPerMinute: 80), local(to, utc)),
        ]
        #expect(summary(beats, .heartRate, utc, from, to).map(\.value?.min) == [60, 70])
        let steps = [
            sample(.steps(count: 600), local("2026-05-10 05:00", utc), local("2026-05-10 07:00", utc)),
            sample(.steps(count: 9), local("2026-05-10 05:59", utc), local("2026-05-10 05:59", utc)),
            sample(.steps(count: 800), local("2026-05-11 11:00", utc), local("2026-05-11 13:00", utc)),
        ]
        let stepBuckets = summary(steps, .steps, utc, from, to)
        #expect(stepBuckets.map(\.start) == [day("2026-05-10"), day("2026-05-11")])
        #expect(stepBuckets.map(\.sum) == [300, 400])
        let sleep = [sample(.sleep(stage: .inBed), local("2026-05-09 22:00", utc), local("2026-05-10 07:00", utc))]
        #expect(summary(sleep, .sleep, utc, from, to).map(\.sleepSeconds) == [[.inBed: 3600]])
        #expect(summary(sleep, .sleep, utc, from, to).map(\.asleepSeconds) == [0])
        #expect(summary(beats, .heartRate, utc, to, from).isEmpty)
        #expect(summary(beats, .heartRate, utc, "2026-06-01 00:00", "2026-07-01 00:00").isEmpty)
    }

    @Test func unsortedInputGivesTheSameSummaryAsSorted() {
        let start = local("2026-05-01 00:00", newYork)
        // Every 65 minutes for 10 minutes: midnight splits fall on 5-minute marks, so partial sums are exact halves.
        let samples = (0..<500).map { index in
            let begin = start.addingTimeInterval(Double(index) * 3900)
            return sample(.steps(count: Double(index % 7)), begin, begin.addingTimeInterval(600))
        }
        let sorted = summary(samples, .steps, newYork, "2026-05-01 00:00", "2026-06-01 00:00")
        #expect(sorted.count == 23)
        #expect(sorted.map(\.sampleCount).reduce(0, +) > 500)  // some samples cross midnight
        #expect(sorted.compactMap(\.sum).reduce(0, +) == Double((0..<500).map { $0 % 7 }.reduce(0, +)))
        #expect(summary(samples.reversed(), .steps, newYork, "2026-05-01 00:00", "2026-06-01 00:00") == sorted)
        let scrambled = (0..<500).map { samples[($0 * 7) % 500] }
        #expect(summary(scrambled, .steps, newYork, "2026-05-01 00:00", "2026-06-01 00:00") == sorted)
    }

    @Test func aYearOfMinuteHeartRateFollowsTheClockChanges() throws {
        let from = local("2025-01-01 00:00", newYork)
        let id = HealthSampleID()
        let samples = (0..<525_600).map { minute in
            HealthSample(
                id: id, value: .heartRate(beatsPerMinute: Double(60 + minute % 60)),
                start: from.addingTimeInterval(Double(minute) * 60), sourceId: "watch")
        }
        let buckets = HealthSummarizer.summarize(
            samples, type: .heartRate, bucket: .day, timeZone: newYork, from: from,
            to: local("2026-01-01 00:00", newYork))
        #expect(buckets.count == 365)
        #expect(buckets.map(\.sampleCount).reduce(0, +) == 525_600)
        let counts = Dictionary(uniqueKeysWithValues: buckets.map { ($0.start.description, $0.sampleCount) })
        #expect(counts["2025-03-09"] == 23 * 60)
        #expect(counts["2025-11-02"] == 25 * 60)
        #expect(counts["2025-07-04"] == 24 * 60)
        #expect(buckets.filter { $0.sampleCount == 24 * 60 }.count == 363)
        let first = try #require(buckets.first)
        #expect(first.start == day("2025-01-01"))
        #expect(first.value == HealthStatistic(count: 1440, min: 60, max: 119, average: 89.5))
        #expect(buckets.last?.start == day("2025-12-31"))
    }

    @Test func bucketsEncodeTheirStartDayAsText() throws {
        let bucket = HealthSummaryBucket(
            start: day("2026-09-21"), sampleCount: 1, sleepSeconds: [.asleepDeep: 600], asleepSeconds: 600)
        let data = try JSONEncoder().encode(bucket)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["start"] as? String == "2026-09-21")
        #expect(json["sleepSeconds"] as? [String: Double] == ["asleepDeep": 600])
        #expect(json["value"] == nil)
        #expect(try JSONDecoder().decode(HealthSummaryBucket.self, from: data) == bucket)
        let bad = Data(#"{"start":"2026-02-30","sampleCount":1}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(HealthSummaryBucket.self, from: bad) }
    }
}

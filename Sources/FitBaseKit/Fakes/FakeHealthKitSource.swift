import FitBaseClient
import FitBaseCore
import Foundation

/// A ``HealthKitSource`` over samples added in memory, with anchors as HealthKit's behave: an anchor is the position
/// after the last sample read, so reading from it again gives the same samples, and new samples come after it.
public actor FakeHealthKitSource: HealthKitSource {
    private var recorded: [HealthSample] = []
    private var recordedCycle: [HealthSampleInput] = []
    private var failure: (any Error)?
    /// How many reads were asked for, per type.
    public private(set) var reads: [HealthSampleType: Int] = [:]

    /// A source holding `samples`, in the order HealthKit recorded them.
    public init(samples: [HealthSample] = []) {
        recorded = samples
    }

    /// Records more samples (the watch synced, say).
    public func add(_ samples: [HealthSample]) {
        recorded += samples
    }

    /// Records cycle samples (`type` a ``HealthKitCycleKind`` name), in the order HealthKit recorded them.
    public func addCycle(_ samples: [HealthSampleInput]) {
        recordedCycle += samples
    }

    /// Makes every read fail with `error` (HealthKit's "not authorized", a locked device), or succeed again for `nil`.
    public func failReads(with error: (any Error)?) {
        failure = error
    }

    public func samples(of type: HealthSampleType, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitChanges {
        reads[type, default: 0] += 1
        if let failure { throw failure }
        let position = anchor.flatMap { Int(String(decoding: $0.data, as: UTF8.self)) } ?? 0
        let later = recorded.indices.filter { $0 >= position && recorded[$0].type == type }
        let taken = later.prefix(limit)
        let next = taken.last.map { $0 + 1 } ?? max(position, recorded.count)
        return HealthKitChanges(
            samples: taken.map { recorded[$0] }, anchor: HealthKitAnchor(data: Data(String(next).utf8)), hasMore: later.count > taken.count)
    }

    /// Cycle samples after the anchor, as HealthKit's anchored queries give them; wrist temperatures come with up to 30
    /// nights before the new ones, as ``HealthKitSource/cycleSamples(of:after:limit:)`` asks.
    public func cycleSamples(of kind: HealthKitCycleKind, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitCycleChanges {
        if let failure { throw failure }
        let position = anchor.flatMap { Int(String(decoding: $0.data, as: UTF8.self)) } ?? 0
        let later = recordedCycle.indices.filter { $0 >= position && recordedCycle[$0].type == kind.rawValue }
        let taken = later.prefix(limit)
        let next = taken.last.map { $0 + 1 } ?? max(position, recordedCycle.count)
        var samples = taken.map { recordedCycle[$0] }
        if kind == .sleepingWristTemperature, !samples.isEmpty {
            let earlier = recordedCycle.indices.filter { $0 < position && recordedCycle[$0].type == kind.rawValue }.suffix(30)
            samples = earlier.map { recordedCycle[$0] } + samples
        }
        return HealthKitCycleChanges(samples: samples, anchor: HealthKitAnchor(data: Data(String(next).utf8)), hasMore: later.count > taken.count)
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation

/// The wire form of health samples: Core's values to the contract's types and back, mapped in this one place for controllers,
/// collections and owners alike.
enum HealthWire {
    static func input(_ wire: Components.Schemas.HealthSampleInput) -> HealthSampleInput {
        HealthSampleInput(
            id: wire.id, type: wire._type, value: wire.value, unit: wire.unit, systolic: wire.systolic, diastolic: wire.diastolic, stage: wire.stage,
            start: wire.start, end: wire.end, sourceId: wire.sourceId, device: wire.device, metadata: wire.metadata?.additionalProperties
        )
    }

    /// An uploaded sample's outcome, case by case (the compiler holds the two lists equal).
    static func wire(_ status: HealthRecords.Outcome.Status) -> Components.Schemas.HealthUploadStatus {
        switch status {
        case .created: .created
        case .duplicate: .duplicate
        case .rejected: .rejected
        }
    }

    static func wire(_ sample: HealthSample) -> Components.Schemas.HealthSample {
        var wire = Components.Schemas.HealthSample(
            id: sample.id.description, _type: sample.type, unit: sample.type.canonicalUnit,
            start: sample.start, end: sample.end, sourceId: sample.sourceId, device: sample.device,
            metadata: sample.metadata.map { .init(additionalProperties: $0) }
        )
        switch sample.value {
        case .heartRate(let value), .steps(let value), .oxygenSaturation(let value): wire.value = value
        case .sleep(let stage): wire.stage = stage
        case .bloodPressure(let systolic, let diastolic):
            wire.systolic = systolic
            wire.diastolic = diastolic
        }
        return wire
    }

    static func wire(_ bucket: HealthSummaryBucket) -> Components.Schemas.HealthSummaryBucket {
        func statistic(_ value: HealthStatistic?) -> Components.Schemas.HealthStatistic? {
            value.map { .init(count: $0.count, min: $0.min, max: $0.max, average: $0.average) }
        }
        return .init(
            start: bucket.start.description, sampleCount: bucket.sampleCount, value: statistic(bucket.value), systolic: statistic(bucket.systolic),
            diastolic: statistic(bucket.diastolic), sum: bucket.sum, asleepSeconds: bucket.asleepSeconds,
            sleepSeconds: bucket.sleepSeconds.map { seconds in .init(additionalProperties: Dictionary(uniqueKeysWithValues: seconds.map { ($0.key.rawValue, $0.value) })) }
        )
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation

/// What the server did with each sample of an upload: `created`, `duplicate` (stored before: nothing changed) or
/// `rejected` with the problem naming the field (`samples[3].value`), and the counts of each.
public typealias HealthUploadResult = Components.Schemas.HealthUploadResult

extension FitBaseClient {
    /// Uploads up to ``HealthUploadBatch/maximumCount`` samples; each is checked and stored on its own, and a sample sent
    /// again (the same HealthKit UUID) is a `duplicate`, so an upload whose answer was lost can simply be sent again.
    ///
    /// ```swift
    /// let result = try await fitbase.uploadHealthSamples(samples)
    /// print(result.created, result.duplicates, result.rejected)
    /// ```
    ///
    /// Fails with `.problem`: `consentRequired` without the `healthData` consent in force, `quotaExceeded` when the
    /// account holds as many samples as it may (nothing was stored), `invalidRequest` for more than 1,000 samples.
    /// Health values are sent to the server only; nothing here logs them.
    public func uploadHealthSamples(_ samples: [HealthSample]) async throws(FitBaseError) -> HealthUploadResult {
        try await uploadHealthSamples(Components.Schemas.HealthSampleUpload(samples: samples.map(Components.Schemas.HealthSampleInput.init)))
    }

    /// Uploads up to ``HealthUploadBatch/maximumCount`` samples as the health upload takes them, such as HealthKit's
    /// cycle samples (``HealthKitCycleKind``), which the server makes fertility signals and periods of; fails as
    /// the upload of ``HealthSample``s does.
    public func uploadHealthSamples(inputs: [HealthSampleInput]) async throws(FitBaseError) -> HealthUploadResult {
        try await uploadHealthSamples(Components.Schemas.HealthSampleUpload(samples: inputs.map(Components.Schemas.HealthSampleInput.init)))
    }

    private func uploadHealthSamples(_ body: Components.Schemas.HealthSampleUpload) async throws(FitBaseError) -> HealthUploadResult {
        try await call { try await self.api.uploadHealthSamples(body: .json(body)).ok.body.json }
    }
}

extension Components.Schemas.HealthSampleInput {
    /// The contract's input of a sample: its value in the canonical unit, named as that unit.
    init(_ sample: HealthSample) {
        self.init(
            id: sample.id.description, _type: sample.type.rawValue, unit: sample.type.canonicalUnit, start: sample.start, end: sample.end,
            sourceId: sample.sourceId, device: sample.device, metadata: sample.metadata.map { .init(additionalProperties: $0) })
        switch sample.value {
        case .heartRate(let number), .steps(let number), .oxygenSaturation(let number): value = number
        case .sleep(let stage): self.stage = stage.rawValue
        case .bloodPressure(let systolic, let diastolic):
            self.systolic = systolic
            self.diastolic = diastolic
        }
    }
}

extension Components.Schemas.HealthSampleInput {
    /// The contract's input of a sample as it was read, before any rule is checked.
    init(_ input: HealthSampleInput) {
        self.init(
            id: input.id, _type: input.type, value: input.value, unit: input.unit, systolic: input.systolic, diastolic: input.diastolic, stage: input.stage,
            start: input.start, end: input.end, sourceId: input.sourceId, device: input.device, metadata: input.metadata.map { .init(additionalProperties: $0) })
    }
}

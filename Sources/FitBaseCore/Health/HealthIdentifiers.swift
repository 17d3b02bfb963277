/// The tag of ``HealthSampleID``: one HealthKit sample.
public enum HealthSampleTag {}

/// Identifies a health sample: HealthKit's own UUID for it, so a re-upload of the same sample is recognised.
public typealias HealthSampleID = Identifier<HealthSampleTag>

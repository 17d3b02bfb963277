import FitBaseCore
import Foundation

/// Where a device's health samples come from: HealthKit's anchored object queries on Apple platforms
/// (``HealthKitAnchoredSource``), a fake in tests and on Linux. ``HealthSampleUploader`` reads it type by type.
public protocol HealthKitSource: Sendable {
    /// The samples of `type` added after `anchor` (all of them for `nil`), at most `limit`, with the anchor that follows
    /// them. Reading from the same anchor again gives the same samples (or, once some were deleted, fewer).
    func samples(of type: HealthSampleType, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitChanges
}

/// A position in HealthKit's history of one type (an archived `HKQueryAnchor`): what was read up to there.
public struct HealthKitAnchor: Sendable, Hashable, Codable {
    /// The anchor's bytes, opaque to everyone but its source.
    public var data: Data

    /// An anchor of the given bytes.
    public init(data: Data) {
        self.data = data
    }
}

/// What a ``HealthKitSource`` read after an anchor.
public struct HealthKitChanges: Sendable, Equatable {
    /// The samples added since the anchor, in Core's form (canonical units).
    public var samples: [HealthSample]
    /// The anchor after these samples: where the next read starts.
    public var anchor: HealthKitAnchor
    /// Whether the read stopped at its limit, so more may follow the new anchor.
    public var hasMore: Bool

    /// Changes of the given parts.
    public init(samples: [HealthSample], anchor: HealthKitAnchor, hasMore: Bool) {
        self.samples = samples
        self.anchor = anchor
        self.hasMore = hasMore
    }
}

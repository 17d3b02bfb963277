import FitBaseCore
import Foundation

/// Where a device's health samples come from: HealthKit's anchored object queries on Apple platforms
/// (``HealthKitAnchoredSource``), a fake in tests and on Linux. ``HealthSampleUploader`` reads it type by type.
public protocol HealthKitSource: Sendable {
    /// The samples of `type` added after `anchor` (all of them for `nil`), at most `limit`, with the anchor that follows
    /// them. Reading from the same anchor again gives the same samples (or, once some were deleted, fewer).
    func samples(of type: HealthSampleType, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitChanges

    /// HealthKit's cycle samples of `kind` added after `anchor` (all of them for `nil`), at most `limit`, as the health
    /// upload takes them (`type` is `kind`'s name, temperatures in `degC`), with the anchor that follows them. For
    /// ``HealthKitCycleKind/sleepingWristTemperature`` the source adds the nights before the new ones (up to 30, beyond
    /// `limit`), so the server can take each new night's deviation from the ones before. A source without cycle data
    /// keeps the default: nothing.
    func cycleSamples(of kind: HealthKitCycleKind, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitCycleChanges

    /// Whether the user has been asked for read access to the types the upload reads. HealthKit never tells whether
    /// reading was allowed (a refused type reads as empty), so this is what "authorized" can mean: asked, and answered.
    func hasRequestedAuthorization() async -> Bool

    /// Asks for read access to the types the upload reads (the system sheet shows once per type).
    func requestAuthorization() async throws
}

extension HealthKitSource {
    /// A source that needs no permission: asked.
    public func hasRequestedAuthorization() async -> Bool { true }

    /// A source that needs no permission: nothing to ask.
    public func requestAuthorization() async throws {}

    /// No cycle samples.
    public func cycleSamples(of kind: HealthKitCycleKind, after anchor: HealthKitAnchor?, limit: Int) async throws -> HealthKitCycleChanges {
        HealthKitCycleChanges(samples: [], anchor: anchor ?? HealthKitAnchor(data: Data()), hasMore: false)
    }
}

/// What a ``HealthKitSource`` read of one kind of cycle sample after an anchor.
public struct HealthKitCycleChanges: Sendable, Equatable {
    /// The samples, as the health upload takes them.
    public var samples: [HealthSampleInput]
    /// The anchor after these samples: where the next read starts.
    public var anchor: HealthKitAnchor
    /// Whether the read stopped at its limit, so more may follow the new anchor.
    public var hasMore: Bool

    /// Changes of the given parts.
    public init(samples: [HealthSampleInput], anchor: HealthKitAnchor, hasMore: Bool) {
        self.samples = samples
        self.anchor = anchor
        self.hasMore = hasMore
    }
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

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The user-owned collections that sync between devices through the change feed.
public enum SyncCollection: String, Sendable, Codable, CaseIterable {
    case plans, workoutLogs, cycleLogs, preferences, healthSamples, cycleSignals

    /// How conflicting writes to the collection are settled.
    public var policy: ConflictPolicy {
        switch self {
        case .workoutLogs, .healthSamples: .appendOnly
        case .plans, .cycleLogs, .preferences, .cycleSignals: .lastWriterWins
        }
    }
}

/// How a write that was not based on the server's latest version is settled.
public enum ConflictPolicy: String, Sendable, Codable {
    /// The copy with the later client `updatedAt` wins; on a tie the server's copy stays (seed 000's policy).
    case lastWriterWins
    /// Records are only ever added: a write not based on the latest version never changes or erases what is
    /// stored, so a logged workout survives whatever another device does.
    case appendOnly
}

/// What the server knows of a record: its version, when it was last written (by the writer's clock) and whether it
/// is a tombstone.
public struct RecordStamp: Sendable, Equatable {
    public var version: Int
    public var updatedAt: Date
    public var deleted: Bool

    public init(version: Int, updatedAt: Date, deleted: Bool) {
        self.version = version
        self.updatedAt = updatedAt
        self.deleted = deleted
    }
}

/// A write a client wants to make.
public enum SyncOperation: String, Sendable, Codable, CaseIterable {
    case upsert, delete
}

/// The outcome of a write against the stored record.
public enum SyncDecision: Sendable, Equatable {
    /// No conflict: the write was based on the latest version (or the record is new).
    case apply
    /// A conflict the client's write wins: it is applied.
    case clientWins
    /// A conflict the server's copy wins: nothing changes and the client takes the server's record.
    case serverWins

    /// Whether the write changes the record.
    public var applies: Bool { self != .serverWins }
}

extension ConflictPolicy {
    /// Settles `operation`, based on `baseVersion` (the version the client last saw; `nil` for a record it created)
    /// and stamped `clientUpdatedAt`, against what the server holds (`nil` when the record never existed).
    public func decide(_ operation: SyncOperation, baseVersion: Int?, clientUpdatedAt: Date, server: RecordStamp?) -> SyncDecision {
        guard let server else { return .apply }
        if baseVersion == server.version { return .apply }
        switch self {
        case .lastWriterWins:
            return clientUpdatedAt > server.updatedAt ? .clientWins : .serverWins
        case .appendOnly:
            return .serverWins
        }
    }
}

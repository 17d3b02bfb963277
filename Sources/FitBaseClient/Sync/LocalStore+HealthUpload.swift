import FitBaseCore
import Foundation
import GRDB

/// Where ``HealthSampleUploader`` keeps its place, sealed like the records: per type the HealthKit anchor it last
/// uploaded up to, and the batch it is sending (read from HealthKit, not yet confirmed by the server). Both live in
/// `sync_state`, so ``erase()`` forgets them with everything else: another account starts from the beginning.
extension LocalStore {
    /// A batch read from HealthKit and on its way to the server; once the server answers, its `anchor` becomes the
    /// type's anchor.
    package struct PendingHealthBatch: Sendable, Equatable, Codable {
        package var type: HealthSampleType
        package var samples: [HealthSample]
        package var anchor: HealthKitAnchor

        package init(type: HealthSampleType, samples: [HealthSample], anchor: HealthKitAnchor) {
            self.type = type
            self.samples = samples
            self.anchor = anchor
        }
    }

    private static let pendingHealthKey = "health.pending"

    private static func anchorKey(_ type: HealthSampleType) -> String { "health.anchor." + type.rawValue }

    /// The anchor `type` was uploaded up to, `nil` before its first upload.
    package func healthAnchor(of type: HealthSampleType) async throws -> HealthKitAnchor? {
        try await sealedState(Self.anchorKey(type), as: HealthKitAnchor.self)
    }

    /// The anchor cycle samples of `kind` were uploaded up to, `nil` before their first upload.
    package func cycleAnchor(of kind: HealthKitCycleKind) async throws -> HealthKitAnchor? {
        try await sealedState(Self.cycleAnchorKey(kind), as: HealthKitAnchor.self)
    }

    /// Moves `kind`'s anchor on, once the server has answered for the samples before it (sending them again only
    /// replaces what they made, so an upload whose answer was lost is simply sent again).
    package func setCycleAnchor(_ anchor: HealthKitAnchor, of kind: HealthKitCycleKind) async throws {
        let sealed = try sealedText(anchor, key: Self.cycleAnchorKey(kind))
        try await queue.write { db in try Self.putState(Self.cycleAnchorKey(kind), sealed, in: db) }
    }

    private static func cycleAnchorKey(_ kind: HealthKitCycleKind) -> String { "health.cycle-anchor." + kind.rawValue }

    /// Moves `type`'s anchor on (a read that found nothing new to upload).
    package func setHealthAnchor(_ anchor: HealthKitAnchor, of type: HealthSampleType) async throws {
        let sealed = try sealedText(anchor, key: Self.anchorKey(type))
        try await queue.write { db in try Self.putState(Self.anchorKey(type), sealed, in: db) }
    }

    /// The batch an interrupted upload left, if any.
    package func pendingHealthBatch() async throws -> PendingHealthBatch? {
        try await sealedState(Self.pendingHealthKey, as: PendingHealthBatch.self)
    }

    /// Keeps `batch` as the one being sent, before it is sent.
    package func beginHealthBatch(_ batch: PendingHealthBatch) async throws {
        let sealed = try sealedText(batch, key: Self.pendingHealthKey)
        try await queue.write { db in try Self.putState(Self.pendingHealthKey, sealed, in: db) }
    }

    /// The server has the batch: its anchor becomes the type's and the batch is forgotten, in one transaction.
    package func finishHealthBatch(_ batch: PendingHealthBatch) async throws {
        let anchor = try sealedText(batch.anchor, key: Self.anchorKey(batch.type))
        try await queue.write { db in
            try Self.putState(Self.anchorKey(batch.type), anchor, in: db)
            try db.run(sql: "DELETE FROM sync_state WHERE key = ?", arguments: [Self.pendingHealthKey])
        }
    }

    private func sealedText(_ value: some Encodable, key: String) throws -> String {
        try sealer().seal(try JSONEncoder().encode(value), context: Self.context("health", key)).base64EncodedString()
    }

    private func sealedState<T: Decodable>(_ key: String, as type: T.Type) async throws -> T? {
        guard let text = try await state(key) else { return nil }
        guard let sealed = Data(base64Encoded: text) else { throw CorruptHealthState(key: key) }
        return try JSONDecoder().decode(type, from: try sealer().open(sealed, context: Self.context("health", key)))
    }

    private static func putState(_ key: String, _ value: String, in db: GRDB.Database) throws {
        try db.run(sql: "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", arguments: [key, value])
    }

    /// A saved upload state that is not what this store writes.
    struct CorruptHealthState: Error {
        var key: String
    }
}

import FitBaseCore
import Foundation
import GRDB

/// The queue of changes not yet on the server: what the sync engine pushes next, and how the answers settle it.
extension LocalStore {
    /// A queued mutation, with the server version of its record as the device knows it now.
    struct PendingMutation: Sendable {
        var mutationID: String
        var collection: SyncCollection
        var recordID: String
        var operation: SyncOperation
        var baseVersion: Int?
        var updatedAt: Date
        var data: Data?
    }

    public func pendingCount() async throws -> Int {
        try await queue.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM pending_mutations")) ?? 0 }
    }

    /// The next mutations to push, oldest first, at most one per record (a later change of the same record waits for
    /// the answer to the earlier one, whose result gives its base version). Marks them sent.
    func nextBatch(limit: Int) async throws -> [PendingMutation] {
        let sealer = try self.sealer()
        return try await queue.write { db in
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT p.seq, p.mutation_id, p.collection, p.record_id, p.op, p.data, p.updated_at, r.version
                FROM pending_mutations p LEFT JOIN records r ON r.collection = p.collection AND r.id = p.record_id
                ORDER BY p.seq LIMIT ?
                """), arguments: [limit * 4])
            var seen = Set<String>()
            var batch: [PendingMutation] = []
            var sequence: [Int64] = []
            for row in rows where batch.count < limit {
                let collectionName: String = row["collection"]
                let recordID: String = row["record_id"]
                guard seen.insert(collectionName + "/" + recordID).inserted, let collection = SyncCollection(rawValue: collectionName) else { continue }
                let version: Int? = row["version"]
                let sealed: Data? = row["data"]
                let mutationID: String = row["mutation_id"]
                guard let operation = SyncOperation(rawValue: row["op"]) else { throw UnreadableQueuedChange(mutationID: mutationID) }
                batch.append(PendingMutation(
                    mutationID: mutationID, collection: collection, recordID: recordID,
                    operation: operation, baseVersion: (version ?? 0) > 0 ? version : nil,
                    updatedAt: Date(timeIntervalSince1970: row["updated_at"]),
                    data: try sealed.map { try sealer.open($0, context: Self.context(collectionName, recordID)) }
                ))
                sequence.append(row["seq"])
            }
            for seq in sequence {
                try db.run(sql: "UPDATE pending_mutations SET sent = 1 WHERE seq = ?", arguments: [seq])
            }
            return batch
        }
    }

    /// What the server answered for one pushed mutation.
    enum Settlement: Sendable {
        case applied(version: Int)
        /// The server's copy stands: `data` (nil for a tombstone) at `version`.
        case serverWins(version: Int, data: Data?, updatedAt: Date)
        case rejected
    }

    /// Removes answered mutations from the queue and brings the records in line with the answers, in one transaction.
    func settle(_ answers: [(PendingMutation, Settlement)]) async throws {
        let sealer = try self.sealer()
        try await queue.write { db in
            for (mutation, settlement) in answers {
                let arguments: StatementArguments = [mutation.collection.rawValue, mutation.recordID]
                try db.run(sql: "DELETE FROM pending_mutations WHERE mutation_id = ?", arguments: [mutation.mutationID])
                let waiting = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM pending_mutations WHERE collection = ? AND record_id = ?)"), arguments: arguments) ?? false
                switch settlement {
                case .applied(let version):
                    if mutation.operation == .delete && !waiting {
                        try db.run(sql: "DELETE FROM records WHERE collection = ? AND id = ?", arguments: arguments)
                    } else {
                        try db.run(sql: "UPDATE records SET version = ? WHERE collection = ? AND id = ?", arguments: [version] + arguments)
                    }
                case .serverWins(let version, let data, let updatedAt):
                    if waiting {
                        // A newer local change is queued: it will be settled against this version in turn.
                        try db.run(sql: "UPDATE records SET version = ? WHERE collection = ? AND id = ?", arguments: [version] + arguments)
                    } else {
                        try Self.put(mutation.collection, id: mutation.recordID, data: data, version: version, updatedAt: updatedAt, sealer: sealer, in: db)
                    }
                case .rejected:
                    break
                }
            }
        }
    }
}

/// A queued change whose operation is neither `upsert` nor `delete`: the file was not written by this SDK, and the
/// change is not pushed as something it may not be.
struct UnreadableQueuedChange: Error, CustomStringConvertible {
    var mutationID: String

    var description: String { "the queued change \(mutationID) has an operation this SDK does not know" }
}

import Crypto
import FitBaseCore
import Foundation
import SQLKit

/// A signed statement of every audit chain's head at one moment: how many chains there were, the Merkle root of their
/// heads (`SHA-256` of `subject|seq|hash`, ordered by subject, paired upwards), and the heads themselves, with
/// `HMAC-SHA-256(audit key, "fitbase-audit-checkpoint-v1|at|chains|root")`.
///
/// Everything in the database can be cut by whoever can write to it: a chain's newest entries together with their
/// digests and a rewound head, or a whole chain with its head and digests, leave a log that still verifies. A
/// checkpoint kept where the database's administrator cannot rewrite it (`fitbase audit checkpoint --out FILE`, shipped
/// to write-once storage) catches both: every chain it names must still hold its head's entry, with that hash.
/// ``AuditService`` also writes one to `audit_checkpoints` every hour (the last 48 are kept), and to the sink of
/// `FITBASE_AUDIT_CHECKPOINT_URL` when there is one (``AuditCheckpointSink``), where `fitbase audit verify` reads it.
struct AuditCheckpoint: Codable, Sendable, Equatable {
    struct Head: Codable, Sendable, Equatable {
        var subject: UUID
        var seq: Int64
        var hash: String
    }

    var version = 1
    var at: Date
    var chains: Int
    var root: String
    var keyID: String
    var mac: String
    var heads: [Head]

    /// The Merkle root of `heads` (ordered by subject); the genesis hash when there are none.
    static func root(of heads: [Head]) -> String {
        var level = heads.sorted { $0.subject.uuidString.lowercased() < $1.subject.uuidString.lowercased() }.map { head in
            Data(SHA256.hash(data: Data("\(head.subject.uuidString.lowercased())|\(head.seq)|\(head.hash)".utf8)))
        }
        guard !level.isEmpty else { return AuditChain.genesis }
        while level.count > 1 {
            level = stride(from: 0, to: level.count, by: 2).map { index in
                index + 1 < level.count ? Data(SHA256.hash(data: level[index] + level[index + 1])) : level[index]
            }
        }
        return AuditChain.hex(level[0])
    }

    static func mac(at: Date, chains: Int, root: String, key: SymmetricKey) -> String {
        let message = "fitbase-audit-checkpoint-v1|\(AuditChain.microseconds(at))|\(chains)|\(root)"
        return AuditChain.hex(HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: key))
    }

    /// A checkpoint of the heads as they are now, signed with `key`, and kept in `audit_checkpoints` (the oldest beyond
    /// the last 48 dropped), then in `sink` (after the database: a checkpoint in the sink is always in the database
    /// too, unless someone deleted it there).
    static func make(with key: AuditKey, database: Database, now: Date, sink: (any AuditCheckpointSink)? = nil) async throws -> AuditCheckpoint {
        let heads = try await database.withConnection { db in
            try await db.select().columns("subject_id", "seq", "hash").from("audit_heads").orderBy("subject_id").all().map { row in
                Head(subject: try row.decode(column: "subject_id", as: UUID.self), seq: try row.decode(column: "seq", as: Int64.self), hash: try row.decode(column: "hash", as: String.self))
            }
        }
        let root = root(of: heads)
        let checkpoint = AuditCheckpoint(
            at: now, chains: heads.count, root: root, keyID: key.id, mac: mac(at: now, chains: heads.count, root: root, key: key.key), heads: heads
        )
        let document = try encoder.encode(checkpoint)
        try await database.transaction { db in
            try await db.insert(into: "audit_checkpoints").columns("at", "document").values(SQLBind(now), SQLBind(document)).run()
            let kept = try await db.select().column("at").from("audit_checkpoints").orderBy("at", .descending).offset(47).limit(1).first()
            if let oldestKept = try kept?.decode(column: "at", as: Date.self) {
                try await db.delete(from: "audit_checkpoints").where("at", .lessThan, oldestKept).run()
            }
        }
        do {
            try await sink?.store(document, named: checkpoint.sinkName)
        } catch {
            throw AuditCheckpointError.sinkFailed(sink: sink?.description ?? "", reason: "\(error)")
        }
        return checkpoint
    }

    /// The newest checkpoint kept in the database.
    static func latest(in database: Database) async throws -> AuditCheckpoint? {
        let row = try await database.withConnection { db in
            try await db.select().column("document").from("audit_checkpoints").orderBy("at", .descending).limit(1).first()
        }
        guard let row else { return nil }
        return try decoder.decode(AuditCheckpoint.self, from: try row.decode(column: "document", as: Data.self))
    }

    /// Why the log no longer holds what this checkpoint signed, or `nil` when it does: the signature (with `keys`),
    /// the root and count against the heads it lists, and each listed head's entry, still in its chain with its hash.
    func firstBreak(in database: Database, keys: [String: SymmetricKey]) async throws -> AuditChain.Break? {
        guard let key = keys[keyID], Self.mac(at: at, chains: chains, root: root, key: key) == mac else {
            return .init(subject: nil, seq: 0, reason: "the checkpoint of \(at.formatted(.iso8601)) is not signed by the audit key")
        }
        guard heads.count == chains, Self.root(of: heads) == root else {
            return .init(subject: nil, seq: 0, reason: "the checkpoint of \(at.formatted(.iso8601)) lists heads its signed root does not cover")
        }
        for start in stride(from: 0, to: heads.count, by: 500) {
            let chunk = Array(heads[start..<min(start + 500, heads.count)])
            let found = try await database.withConnection { db in
                try await db.select().columns("subject_id", "seq", "hash").from("audit_entries")
                    .where("subject_id", .in, chunk.map(\.subject)).where("seq", .in, Array(Set(chunk.map(\.seq)))).all()
            }
            var entries: [UUID: [Int64: String]] = [:]
            for row in found {
                entries[try row.decode(column: "subject_id", as: UUID.self), default: [:]][try row.decode(column: "seq", as: Int64.self)] =
                    try row.decode(column: "hash", as: String.self)
            }
            for head in chunk {
                guard let chain = entries[head.subject], let hash = chain[head.seq] else {
                    return .init(
                        subject: head.subject, seq: head.seq,
                        reason: "the checkpoint of \(at.formatted(.iso8601)) names entry \(head.seq) of this chain, which is gone (the chain was cut or deleted)"
                    )
                }
                guard hash == head.hash else {
                    return .init(subject: head.subject, seq: head.seq, reason: "the entry is not the one the checkpoint of \(at.formatted(.iso8601)) names (the chain was rewritten)")
                }
            }
        }
        return nil
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(AuditChain.microseconds(date))
        }
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            Date(timeIntervalSince1970: Double(try decoder.singleValueContainer().decode(Int64.self)) / 1_000_000)
        }
        return decoder
    }()
}

/// Why a checkpoint cannot be made.
enum AuditCheckpointError: Error, CustomStringConvertible {
    case noAuditKey
    /// The checkpoint is in the database but could not be written to the sink.
    case sinkFailed(sink: String, reason: String)

    var description: String {
        switch self {
        case .noAuditKey: "there is no audit key yet: start the server once (it makes one) before writing a checkpoint"
        case .sinkFailed(let sink, let reason):
            "the checkpoint is in audit_checkpoints but could not be written to \(sink) (FITBASE_AUDIT_CHECKPOINT_URL): \(reason)"
        }
    }
}

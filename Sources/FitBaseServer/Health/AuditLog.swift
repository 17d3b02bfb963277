import Crypto
import FitBaseCore
import Foundation
import SQLKit

/// `health_audit_log`: every read, write, delete, export and sync of health data, hash-chained. It has no foreign
/// key: entries outlive the account they name (they hold its id and counts, never health values).
struct CreateHealthAuditLog: Migration {
    let name = "2026-11-22.health.audit"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "health_audit_log")
            .column("seq", type: .bigint, .primaryKey(autoIncrement: false))
            .column("at", type: engine.instant, .notNull)
            .column("actor_id", type: engine.uuid)
            .column("subject_id", type: engine.uuid, .notNull)
            .column("action", type: .text, .notNull)
            .column("resource", type: .text, .notNull)
            .column("count", type: .int, .notNull)
            .column("request_id", type: .text)
            .column("outcome", type: .text, .notNull)
            .column("prev_hash", type: .text, .notNull)
            .column("hash", type: .text, .notNull)
            .run()
        try await database.create(index: "health_audit_log_subject").on("health_audit_log").column("subject_id").column("seq").run()
    }
}

/// What was done to health data.
enum AuditAction: String, Sendable, Codable, CaseIterable {
    case read, write, delete, export, sync
}

/// How it ended.
enum AuditOutcome: String, Sendable, Codable, CaseIterable {
    case success, denied
}

/// One link of the chain.
struct AuditEntry: Sendable, Equatable {
    var seq: Int64
    var at: Date
    /// Who acted (`nil` for the system, e.g. account deletion by an operator).
    var actorID: UUID?
    /// Whose health data it was.
    var subjectID: UUID
    /// An ``AuditAction`` (kept as stored, so an altered value is hashed as it reads).
    var action: String
    /// What was touched: `healthSamples`, `healthSummary`, `healthKey`.
    var resource: String
    /// How many samples (or buckets).
    var count: Int
    var requestID: String?
    /// An ``AuditOutcome``, as stored.
    var outcome: String
    var prevHash: String
    var hash: String
}

/// The chain's rules: `hash = hex(SHA-256(prevHash ‖ canonical JSON of the entry))`, where `prevHash` is the previous
/// entry's hash as 64 lower-case hex characters (64 zeros before the first entry) and the canonical JSON is every
/// field but `hash`, keys sorted, no spaces, `at` as integer microseconds since 1970, absent values as `null`.
enum AuditChain {
    static let genesis = String(repeating: "0", count: 64)

    static func hash(of entry: AuditEntry) -> String {
        var digest = SHA256()
        digest.update(data: Data(entry.prevHash.utf8))
        digest.update(data: canonicalJSON(of: entry))
        return digest.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func canonicalJSON(of entry: AuditEntry) -> Data {
        func string(_ text: String?) -> String {
            guard let text else { return "null" }
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let fields: [(String, String)] = [
            ("action", string(entry.action)), ("actorId", string(entry.actorID?.uuidString.lowercased())),
            ("at", String(microseconds(entry.at))), ("count", String(entry.count)), ("outcome", string(entry.outcome)),
            ("prevHash", string(entry.prevHash)), ("requestId", string(entry.requestID)), ("resource", string(entry.resource)),
            ("seq", String(entry.seq)), ("subjectId", string(entry.subjectID.uuidString.lowercased())),
        ]
        return Data(("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
    }

    static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// Where a chain stops holding.
    struct Break: Sendable, Equatable, CustomStringConvertible {
        var seq: Int64
        var reason: String
        var description: String { "entry \(seq): \(reason)" }
    }

    /// The first broken link of `entries` (ascending by seq), which continue after `previous` (seq, hash).
    static func firstBreak(in entries: [AuditEntry], after previous: (seq: Int64, hash: String)) -> Break? {
        var previous = previous
        for entry in entries {
            if entry.seq != previous.seq + 1 {
                return Break(seq: entry.seq, reason: "follows entry \(previous.seq): entries \(previous.seq + 1)…\(entry.seq - 1) are missing or out of order")
            }
            if entry.prevHash != previous.hash {
                return Break(seq: entry.seq, reason: "prevHash does not match the hash of entry \(previous.seq) (an entry was changed, removed or reordered)")
            }
            if hash(of: entry) != entry.hash {
                return Break(seq: entry.seq, reason: "hash does not match its contents (the entry was changed)")
            }
            previous = (entry.seq, entry.hash)
        }
        return nil
    }
}

/// An entry about to be appended (the log assigns seq, time and hashes).
struct AuditEvent: Sendable {
    var actor: UserID?
    var subject: UserID
    var action: AuditAction
    var resource: String
    var count: Int
    var outcome: AuditOutcome = .success
    var requestID: String? = RequestScope.current.requestID
}

/// Appends to and reads the audit log. Appends are serialized — on PostgreSQL by a transaction-level advisory lock
/// across every instance, on SQLite by its single writer — so the chain never forks.
struct AuditLog: Sendable {
    let database: Database

    /// Appends inside the caller's transaction (so the entry commits with the change it records).
    @discardableResult
    static func append(_ event: AuditEvent, on db: any SQLDatabase, engine: DatabaseEngine) async throws -> AuditEntry {
        if engine == .postgres { try await db.raw("SELECT pg_advisory_xact_lock(\(bind: lockKey))").run() }
        let last = try await db.select().columns("seq", "hash").from("health_audit_log").orderBy("seq", .descending).limit(1).first()
        var entry = AuditEntry(
            seq: (try last?.decode(column: "seq", as: Int64.self) ?? 0) + 1, at: .storageNow, actorID: event.actor?.rawValue,
            subjectID: event.subject.rawValue, action: event.action.rawValue, resource: event.resource, count: event.count,
            requestID: event.requestID, outcome: event.outcome.rawValue, prevHash: try last?.decode(column: "hash", as: String.self) ?? AuditChain.genesis,
            hash: ""
        )
        entry.hash = AuditChain.hash(of: entry)
        try await db.insert(into: "health_audit_log")
            .columns("seq", "at", "actor_id", "subject_id", "action", "resource", "count", "request_id", "outcome", "prev_hash", "hash")
            .values(
                SQLBind(entry.seq), SQLBind(entry.at), SQLBind(entry.actorID), SQLBind(entry.subjectID), SQLBind(entry.action),
                SQLBind(entry.resource), SQLBind(entry.count), SQLBind(entry.requestID), SQLBind(entry.outcome),
                SQLBind(entry.prevHash), SQLBind(entry.hash)
            )
            .run()
        return entry
    }

    /// Appends in a transaction of its own (reads, denials).
    func append(_ event: AuditEvent) async throws {
        let engine = database.engine
        try await database.transaction { db in _ = try await Self.append(event, on: db, engine: engine) }
    }

    /// Entries about `subject`, newest first.
    func entries(about subject: UserID, offset: Int, limit: Int) async throws -> [AuditEntry] {
        try await database.withConnection { db in
            try await Self.select(on: db).where("subject_id", .equal, subject.rawValue).orderBy("seq", .descending)
                .offset(offset).limit(limit).all().map(Self.entry)
        }
    }

    /// The verdict of walking the whole chain.
    struct Verification: Sendable, Equatable {
        var entries: Int
        var firstBreak: AuditChain.Break?
    }

    /// Walks the chain in pages, from the first entry, and reports the first broken link.
    func verify(pageSize: Int = 10_000) async throws -> Verification {
        var previous: (seq: Int64, hash: String) = (0, AuditChain.genesis)
        var checked = 0
        while true {
            let after = previous.seq
            let rows = try await database.withConnection { db in
                try await Self.select(on: db).where("seq", .greaterThan, after).orderBy("seq").limit(pageSize).all()
            }
            var page: [AuditEntry] = []
            page.reserveCapacity(rows.count)
            for row in rows {
                do {
                    page.append(try Self.entry(row))
                } catch {
                    let seq = (try? row.decode(column: "seq", as: Int64.self)) ?? (page.last?.seq ?? previous.seq) + 1
                    if let broken = AuditChain.firstBreak(in: page, after: previous) { return Verification(entries: checked, firstBreak: broken) }
                    return Verification(entries: checked + page.count, firstBreak: .init(seq: seq, reason: "the entry cannot be read (\(error))"))
                }
            }
            if let broken = AuditChain.firstBreak(in: page, after: previous) { return Verification(entries: checked, firstBreak: broken) }
            checked += page.count
            guard let last = page.last, page.count == pageSize else { return Verification(entries: checked, firstBreak: nil) }
            previous = (last.seq, last.hash)
        }
    }

    /// "fitbase audit" as a number, so concurrent appenders of every instance take turns.
    private static let lockKey: Int64 = 0x6669_7461_7564_6974

    private static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns("seq", "at", "actor_id", "subject_id", "action", "resource", "count", "request_id", "outcome", "prev_hash", "hash")
            .from("health_audit_log")
    }

    private static func entry(_ row: any SQLRow) throws -> AuditEntry {
        AuditEntry(
            seq: try row.decode(column: "seq", as: Int64.self), at: try row.decode(column: "at", as: Date.self),
            actorID: try row.decode(column: "actor_id", as: UUID?.self), subjectID: try row.decode(column: "subject_id", as: UUID.self),
            action: try row.decode(column: "action", as: String.self),
            resource: try row.decode(column: "resource", as: String.self), count: try row.decode(column: "count", as: Int.self),
            requestID: try row.decode(column: "request_id", as: String?.self),
            outcome: try row.decode(column: "outcome", as: String.self),
            prevHash: try row.decode(column: "prev_hash", as: String.self), hash: try row.decode(column: "hash", as: String.self)
        )
    }
}

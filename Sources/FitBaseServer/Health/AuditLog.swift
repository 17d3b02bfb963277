import Crypto
import FitBaseCore
import Foundation
import Logging
import ServiceLifecycle
import SQLKit
import Synchronization

/// What was done to health data.
enum AuditAction: String, Sendable, Codable, CaseIterable {
    case read, write, delete, export, sync
}

/// How it ended.
enum AuditOutcome: String, Sendable, Codable, CaseIterable {
    case success, denied
}

/// One link of a user's chain.
struct AuditEntry: Sendable, Equatable {
    /// Position in the subject's chain, from 1.
    var seq: Int64
    var at: Date
    /// Who acted (`nil` for the system, e.g. account deletion by an operator).
    var actorID: UUID?
    /// Whose data it was: the chain's owner.
    var subjectID: UUID
    /// An ``AuditAction`` (kept as stored, so an altered value is hashed as it reads).
    var action: String
    /// What was touched: `healthSamples`, `healthSummary`, `healthKey`, `cyclePeriods`, `workoutLogs`.
    var resource: String
    /// How many records (or buckets, or refusals).
    var count: Int
    /// The id the server gave the request.
    var requestID: String?
    /// The id the client sent in `X-Request-ID`, if any: the client's word, recorded apart from the server's.
    var clientRequestID: String? = nil
    /// An ``AuditOutcome``, as stored.
    var outcome: String
    var prevHash: String
    var hash: String
}

/// The chain's rules: `hash = hex(SHA-256(prevHash ‖ canonical JSON of the entry))`, where `prevHash` is the previous
/// entry's hash of the same subject as 64 lower-case hex characters (64 zeros before their first entry) and the
/// canonical JSON is every field but `hash`, keys sorted, no spaces, `at` as integer microseconds since 1970, absent
/// values as `null`. (Entries of earlier versions, one chain for the server, had no `clientRequestId`.)
enum AuditChain {
    static let genesis = String(repeating: "0", count: 64)

    static func hash(of entry: AuditEntry) -> String {
        hash(entry, canonicalJSON(of: entry, clientRequestID: true))
    }

    /// The hash of an entry of the single chain of earlier versions.
    static func legacyHash(of entry: AuditEntry) -> String {
        hash(entry, canonicalJSON(of: entry, clientRequestID: false))
    }

    private static func hash(_ entry: AuditEntry, _ json: Data) -> String {
        var digest = SHA256()
        digest.update(data: Data(entry.prevHash.utf8))
        digest.update(data: json)
        return hex(digest.finalize())
    }

    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        hexString(bytes)
    }

    /// `text` as a JSON string (quote, backslash and control characters escaped), `null` when absent.
    static func jsonString(_ text: String?) -> String {
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

    static func canonicalJSON(of entry: AuditEntry, clientRequestID: Bool = true) -> Data {
        let string = jsonString
        var fields: [(String, String)] = [
            ("action", string(entry.action)), ("actorId", string(entry.actorID?.uuidString.lowercased())),
            ("at", String(microseconds(entry.at))), ("count", String(entry.count)), ("outcome", string(entry.outcome)),
            ("prevHash", string(entry.prevHash)), ("requestId", string(entry.requestID)), ("resource", string(entry.resource)),
            ("seq", String(entry.seq)), ("subjectId", string(entry.subjectID.uuidString.lowercased())),
        ]
        if clientRequestID { fields.insert(("clientRequestId", string(entry.clientRequestID)), at: 2) }
        return Data(("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
    }

    static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// Where a chain stops holding.
    struct Break: Sendable, Equatable, CustomStringConvertible {
        /// Whose chain (`nil` for the legacy chain of earlier versions).
        var subject: UUID?
        var seq: Int64
        var reason: String
        var description: String {
            (subject.map { "chain of \($0.uuidString.lowercased()), " } ?? "") + "entry \(seq): \(reason)"
        }
    }

    /// The first broken link of `entries` (one subject's, ascending by seq), which continue after `previous`.
    static func firstBreak(in entries: [AuditEntry], after previous: (seq: Int64, hash: String)) -> Break? {
        var previous = previous
        for entry in entries {
            if entry.seq != previous.seq + 1 {
                return Break(subject: entry.subjectID, seq: entry.seq, reason: "follows entry \(previous.seq): entries \(previous.seq + 1)…\(entry.seq - 1) are missing or out of order")
            }
            if entry.prevHash != previous.hash {
                return Break(subject: entry.subjectID, seq: entry.seq, reason: "prevHash does not match the hash of entry \(previous.seq) (an entry was changed, removed or reordered)")
            }
            if hash(of: entry) != entry.hash {
                return Break(subject: entry.subjectID, seq: entry.seq, reason: "hash does not match its contents (the entry was changed)")
            }
            previous = (entry.seq, entry.hash)
        }
        return nil
    }

    /// The first broken link of the single chain of earlier versions (every subject's entries, by seq from 1).
    static func firstLegacyBreak(in entries: [AuditEntry]) -> Break? {
        var previous: (seq: Int64, hash: String) = (0, genesis)
        for entry in entries {
            guard entry.seq == previous.seq + 1, entry.prevHash == previous.hash, legacyHash(of: entry) == entry.hash else {
                return Break(subject: nil, seq: entry.seq, reason: "the single audit chain of an earlier version is broken here")
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
    var clientRequestID: String? = RequestScope.current.clientRequestID
}

/// Appends to and reads the audit log: one hash chain per user. Appends of one user are serialized by their chain's
/// head row (`audit_heads`: a row lock on PostgreSQL, the single writer on SQLite), so a user's chain never forks and
/// users never wait for each other's chains. Refusals are not appended one by one: they are counted in memory and
/// written once a minute as one entry per user, action and resource, with the count (``flushRefusals(now:)``), so a
/// client hammering an endpoint it may not use writes nothing per request.
struct AuditLog: Sendable {
    let database: Database
    let refusals: AuditRefusals
    private let queue: AuditQueue

    init(database: Database, refusals: AuditRefusals = AuditRefusals()) {
        self.database = database
        self.refusals = refusals
        self.queue = AuditQueue()
    }

    /// Appends inside the caller's transaction (so the entry commits with the change it records).
    @discardableResult
    static func append(_ event: AuditEvent, on db: any SQLDatabase, engine: DatabaseEngine) async throws -> AuditEntry {
        // The chain's next position and last hash, claimed by moving its head: the row stays locked until commit.
        let head = try await claimHead(event.subject.rawValue).first(on: db)
        var entry = AuditEntry(
            seq: try head?.decode(column: "seq", as: Int64.self) ?? 1, at: .storageNow, actorID: event.actor?.rawValue,
            subjectID: event.subject.rawValue, action: event.action.rawValue, resource: event.resource, count: event.count,
            requestID: event.requestID, clientRequestID: event.clientRequestID, outcome: event.outcome.rawValue,
            prevHash: try head?.decode(column: "hash", as: String.self) ?? AuditChain.genesis, hash: ""
        )
        entry.hash = AuditChain.hash(of: entry)
        try await insert(entry, on: db)
        try await setHeadHash(entry.hash, entry.subjectID).run(on: db)
        return entry
    }

    private static let setHeadHash = StoredStatement(#"UPDATE "audit_heads" SET "hash" = ? WHERE "subject_id" = ?"#)

    /// Moves a chain's head one position on (made at position 1 for a first entry), answering the new position and
    /// the hash it follows.
    private static let claimHead = StoredStatement(
        #"INSERT INTO "audit_heads" ("subject_id", "seq", "hash", "digested_seq") VALUES (?, 1, '\#(AuditChain.genesis)', 0) "#
            + #"ON CONFLICT ("subject_id") DO UPDATE SET "seq" = "audit_heads"."seq" + 1 RETURNING "seq", "hash""#
    )

    static func insert(_ entry: AuditEntry, on db: any SQLDatabase) async throws {
        try await insertEntry(
            entry.subjectID, entry.seq, entry.at, entry.actorID, entry.action, entry.resource, entry.count, entry.requestID, entry.clientRequestID,
            entry.outcome, entry.prevHash, entry.hash
        ).run(on: db)
    }

    private static let insertEntry = StoredStatement(
        #"INSERT INTO "audit_entries" ("subject_id", "seq", "at", "actor_id", "action", "resource", "count", "request_id", "client_request_id", "#
            + #""outcome", "prev_hash", "hash") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"#
    )

    /// Appends outside a change (reads, exports, pulls) and returns once the entry is committed; a refusal is only
    /// counted (see the type's notes). Entries appended at the same moment share one transaction (group commit): the
    /// first caller writes what has queued up, the others wait for that commit, so a burst of reads costs the
    /// database's single writer (SQLite) a transaction or two, not one each, and writers queued behind it wait that
    /// much less.
    func append(_ event: AuditEvent) async throws {
        // A refusal is counted, unless the tally is full (then it is written now, as before).
        if event.outcome == .denied, refusals.count(event) { return }
        let database = self.database
        try await queue.append(event) { events in
            let engine = database.engine
            try await database.transaction { db in
                for event in events { _ = try await Self.append(event, on: db, engine: engine) }
            }
        }
    }

    /// Writes the refusals counted since the last flush: one entry per user, action and resource, with the count;
    /// returns how many entries.
    @discardableResult
    func flushRefusals() async throws -> Int {
        let pending = refusals.take()
        guard !pending.isEmpty else { return 0 }
        let engine = database.engine
        do {
            try await database.transaction { db in
                for event in pending { _ = try await Self.append(event, on: db, engine: engine) }
            }
        } catch {
            refusals.restore(pending)
            throw error
        }
        return pending.count
    }

    /// Entries about `subject`, newest first.
    func entries(about subject: UserID, offset: Int, limit: Int) async throws -> [AuditEntry] {
        try await database.withConnection { db in
            try await Self.select(on: db).where("subject_id", .equal, subject.rawValue).orderBy("seq", .descending)
                .offset(offset).limit(limit).all().map(Self.entry)
        }
    }

    static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns(columns).from("audit_entries")
    }

    private static let columns = [
        "subject_id", "seq", "at", "actor_id", "action", "resource", "count", "request_id", "client_request_id", "outcome", "prev_hash", "hash",
    ]
    static let legacyColumns = ["seq", "at", "actor_id", "subject_id", "action", "resource", "count", "request_id", "outcome", "prev_hash", "hash"]

    static func entry(_ row: any SQLRow) throws -> AuditEntry {
        var entry = try legacyEntry(row)
        entry.clientRequestID = try row.decode(column: "client_request_id", as: String?.self)
        return entry
    }

    static func legacyEntry(_ row: any SQLRow) throws -> AuditEntry {
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

/// Refusals counted in memory until the next flush, by user, actor, action and resource.
final class AuditRefusals: Sendable {
    private struct Key: Hashable {
        var subject: UserID
        var actor: UserID?
        var action: AuditAction
        var resource: String
    }

    private let counts = Mutex<[Key: AuditEvent]>([:])
    /// Past this many distinct keys a flush is due whatever the time (bounds the memory a flood of users can take).
    static let limit = 10_000

    /// Counts one refusal; `false` when the tally is full and it was not counted.
    func count(_ event: AuditEvent) -> Bool {
        let key = Key(subject: event.subject, actor: event.actor, action: event.action, resource: event.resource)
        return counts.withLock { counts in
            if var counted = counts[key] {
                counted.count += 1
                counts[key] = counted
            } else if counts.count < Self.limit {
                var first = event
                first.count = 1
                counts[key] = first
            } else {
                return false
            }
            return true
        }
    }

    /// The counted refusals, forgotten here.
    func take() -> [AuditEvent] {
        counts.withLock { counts in
            defer { counts.removeAll() }
            return Array(counts.values)
        }
    }

    /// Puts back what a failed flush took.
    func restore(_ events: [AuditEvent]) {
        counts.withLock { counts in
            for event in events {
                let key = Key(subject: event.subject, actor: event.actor, action: event.action, resource: event.resource)
                counts[key, default: AuditEvent(actor: event.actor, subject: event.subject, action: event.action, resource: event.resource, count: 0, outcome: .denied, requestID: event.requestID, clientRequestID: event.clientRequestID)].count += event.count
            }
        }
    }

    var isEmpty: Bool { counts.withLock { $0.isEmpty } }
}

/// Entries waiting for the next group commit of ``AuditLog/append(_:)``.
final class AuditQueue: Sendable {
    private struct State {
        var pending: [(event: AuditEvent, done: CheckedContinuation<Void, any Error>)] = []
        var writing = false
    }

    private let state = Mutex(State())

    /// Queues `event`; the caller that finds no commit under way writes the queue with `write`, batch after batch,
    /// until it is empty. Returns (or throws) when the batch holding `event` is committed (or failed).
    func append(_ event: AuditEvent, write: @escaping @Sendable ([AuditEvent]) async throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            let leads = state.withLock { state in
                state.pending.append((event, done))
                defer { state.writing = true }
                return !state.writing
            }
            guard leads else { return }
            Task {
                while true {
                    let batch = state.withLock { state in
                        defer { state.pending.removeAll() }
                        if state.pending.isEmpty { state.writing = false }
                        return state.pending
                    }
                    if batch.isEmpty { return }
                    do {
                        try await write(batch.map(\.event))
                        for waiter in batch { waiter.done.resume() }
                    } catch {
                        for waiter in batch { waiter.done.resume(throwing: error) }
                    }
                }
            }
        }
    }
}

import Crypto
import FitBaseCore
import Foundation
import Logging
import ServiceLifecycle
import SQLKit

/// The audit key: a random 256-bit HMAC key, made on the first start, kept in the key store (`audit_keys`) wrapped
/// by the master key. It signs the heads of the audit chains, so that rewriting a chain end to end — recomputing
/// every hash, which anyone who can write to the database can do — no longer matches the signatures.
struct AuditKey: Sendable {
    let id: String
    let key: SymmetricKey

    /// What a wrapped audit key is bound to.
    static func context(_ id: String) -> String {
        "audit_keys/\(id)"
    }

    /// Every audit key of the key store, unwrapped, by id; the first start makes one.
    static func load(from keys: HealthKeyStore, masterKey: MasterKey, creating: Bool) async throws -> [String: SymmetricKey] {
        var stored = try await keys.auditKeys()
        if stored.isEmpty, creating {
            let id = "audit-1"
            let raw = SymmetricKey(size: .bits256)
            let wrapped = try masterKey.seal(raw.withUnsafeBytes { Data($0) }, context: context(id))
            try await keys.insertAuditKeyIfAbsent(id: id, masterKeyID: masterKey.id, wrapped: wrapped)
            stored = try await keys.auditKeys()
        }
        var unwrapped: [String: SymmetricKey] = [:]
        for key in stored {
            guard key.masterKeyID == masterKey.id else {
                throw HealthVaultError.wrongMasterKey(configured: masterKey.id, stored: key.masterKeyID, keys: 1)
            }
            unwrapped[key.id] = SymmetricKey(data: try masterKey.open(key.wrapped, context: context(key.id)))
        }
        return unwrapped
    }

    /// The key new digests are signed with.
    static func current(of keys: [String: SymmetricKey]) -> AuditKey? {
        keys.keys.max().map { AuditKey(id: $0, key: keys[$0]!) }
    }
}

/// Signed digests of the audit chains (`audit_digests`): for each chain whose head moved since its last digest, the
/// head's position and hash with `HMAC-SHA-256(audit key, "fitbase-audit-digest-v2|subject|seq|hash|at|previous mac")`,
/// written every minute by ``AuditService`` (by whichever instance gets there first; a digest of a head is written
/// once). Each digest's MAC covers the chain's previous digest, so the digests of a chain are a chain too: one removed
/// from the middle is found. `fitbase audit verify` checks each digest's signature and link and that the entry it
/// names still has that hash, so a chain rewritten without the key is found up to its last digest; entries after it
/// are checked by their hashes only. (Digests written before the chaining, `prev_mac` NULL, are v1: no link.) A cut of
/// a chain's end together with its newest digests is found by a checkpoint (``AuditCheckpoint``).
enum AuditDigests {
    static func mac(subject: UUID, seq: Int64, hash: String, at: Date, key: SymmetricKey, previous: String?) -> String {
        var message = "|\(subject.uuidString.lowercased())|\(seq)|\(hash)|\(AuditChain.microseconds(at))"
        if let previous {
            message = "fitbase-audit-digest-v2" + message + "|" + previous
        } else {
            message = "fitbase-audit-digest-v1" + message
        }
        return AuditChain.hex(HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: key))
    }

    /// The MAC of `subject`'s newest digest, `""` when it has none (what the next digest links to).
    static func lastMAC(of subject: UUID, on db: any SQLDatabase) async throws -> String {
        try await db.select().column("mac").from("audit_digests").where("subject_id", .equal, subject)
            .orderBy("seq", .descending).limit(1).first()?.decode(column: "mac", as: String.self) ?? ""
    }

    /// Signs the heads of every chain that moved since its last digest, `batch` at a time; returns how many.
    @discardableResult
    static func sign(with key: AuditKey, database: Database, now: Date, batch: Int = 1_000) async throws -> Int {
        var signed = 0
        while true {
            let heads = try await database.withConnection { db in
                try await db.select().columns("subject_id", "seq", "hash").from("audit_heads")
                    .where(SQLColumn("digested_seq"), .lessThan, SQLColumn("seq")).limit(batch).all()
                    .map { (subject: try $0.decode(column: "subject_id", as: UUID.self), seq: try $0.decode(column: "seq", as: Int64.self), hash: try $0.decode(column: "hash", as: String.self)) }
            }
            if heads.isEmpty { return signed }
            try await database.transaction { db in
                // In the order every transaction that moves several heads takes them (``AuditLog/inHeadOrder(_:)``): a
                // batch of audited reads and this pass, taking the same two heads in opposite orders, deadlocked.
                for head in heads.sorted(by: { $0.subject.uppercasedString < $1.subject.uppercasedString }) {
                    // The head's row first: two instances signing at once take turns on it, so each links to the last.
                    let moved = try await db.update("audit_heads").set("digested_seq", to: head.seq)
                        .where("subject_id", .equal, head.subject).where("digested_seq", .lessThan, head.seq).returning("subject_id").all()
                    guard !moved.isEmpty else { continue }
                    let previous = try await lastMAC(of: head.subject, on: db)
                    try await db.insert(into: "audit_digests").columns("subject_id", "seq", "hash", "at", "key_id", "mac", "prev_mac")
                        .values(
                            SQLBind(head.subject), SQLBind(head.seq), SQLBind(head.hash), SQLBind(now), SQLBind(key.id),
                            SQLBind(mac(subject: head.subject, seq: head.seq, hash: head.hash, at: now, key: key.key, previous: previous)),
                            SQLBind(previous)
                        )
                        .ignoringConflicts(with: ["subject_id", "seq"])
                        .run()
                }
            }
            signed += heads.count
            if heads.count < batch { return signed }
        }
    }
}

/// Writes the counted refusals and signs the chains' heads every minute, and once more as the server stops; writes a
/// checkpoint of every head every `checkpointInterval` (`FITBASE_AUDIT_CHECKPOINT_SECONDS`, an hour by default; the
/// first a minute after start), to the database and to `sink`. Every instance writes its own: they are signed
/// statements of what the database held, and more of them only narrow the window a cut can hide in.
struct AuditService: Service {
    let audit: AuditLog
    let key: AuditKey
    let logger: Logger
    let clock: ServerClock
    var interval: Duration = .seconds(60)
    var checkpointInterval: TimeInterval = 3600
    var sink: (any AuditCheckpointSink)? = nil

    func run() async throws {
        var lastCheckpoint = Date.distantPast
        while !Task.isCancelled {
            let stopping: Bool
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
                stopping = false
            } catch {
                stopping = true
            }
            do {
                try await audit.flushRefusals()
                let now = clock.now
                try await AuditDigests.sign(with: key, database: audit.database, now: now)
                if now.timeIntervalSince(lastCheckpoint) >= checkpointInterval {
                    do {
                        _ = try await AuditCheckpoint.make(with: key, database: audit.database, now: now, sink: sink)
                        lastCheckpoint = now
                    } catch let error as AuditCheckpointError {
                        // In the database, not in the sink: logged, and tried again next period (`verify` warns of
                        // a sink that falls behind), not every minute.
                        lastCheckpoint = now
                        throw error
                    }
                }
            } catch {
                logger.error("audit digest run failed", metadata: ["error": "\(error)"])
            }
            if stopping { return }
        }
    }
}

extension AuditLog {
    /// The verdict of walking every chain.
    struct Verification: Sendable, Equatable {
        /// Entries whose links held.
        var entries: Int
        var chains: Int
        /// Digests whose signature and entry held.
        var digests: Int
        /// Entries after their chain's last digest (checked by their hashes only).
        var unsigned: Int
        /// Checkpoints checked.
        var checkpoints = 0
        var firstBreak: AuditChain.Break?
    }

    /// Walks every chain from its first entry, in pages: links and hashes, each digest's signature against `keys`
    /// (the audit keys by id; without them digests are not checked) and the entry it names, and each chain's head.
    /// Reports the first broken link found.
    func verify(keys: [String: SymmetricKey]? = nil, pageSize: Int = 10_000) async throws -> Verification {
        var verdict = Verification(entries: 0, chains: 0, digests: 0, unsigned: 0, firstBreak: nil)
        if try await database.tableExists("health_audit_log_legacy") {
            verdict.firstBreak = .init(
                subject: nil, seq: 0,
                reason: "the single audit chain of an earlier version was found broken when it was migrated; it is kept, not re-signed, in health_audit_log_legacy"
            )
            return verdict
        }
        var heads: [UUID: (seq: Int64, hash: String)] = [:]
        for row in try await database.withConnection({ db in try await db.select().columns("subject_id", "seq", "hash").from("audit_heads").all() }) {
            heads[try row.decode(column: "subject_id", as: UUID.self)] = (try row.decode(column: "seq", as: Int64.self), try row.decode(column: "hash", as: String.self))
        }
        var seen: Set<UUID> = []
        // The chain being walked: its last good link, and its digests by position.
        var subject: UUID?
        var previous: (seq: Int64, hash: String) = (0, AuditChain.genesis)
        var digests: [Int64: (hash: String, at: Date, keyID: String, mac: String, previous: String?)] = [:]
        var lastDigest: Int64 = 0

        func endOfChain() -> AuditChain.Break? {
            guard let subject else { return nil }
            if let beyond = digests.keys.filter({ $0 > previous.seq }).min() {
                return .init(subject: subject, seq: previous.seq + 1, reason: "entries \(previous.seq + 1)…\(beyond) are missing (a signed digest names entry \(beyond))")
            }
            guard let head = heads[subject], head.seq == previous.seq, head.hash == previous.hash else {
                return .init(subject: subject, seq: previous.seq + 1, reason: "the chain's head does not name its last entry (entries removed from its end?)")
            }
            verdict.unsigned += Int(previous.seq - lastDigest)
            return nil
        }

        var after: (UUID, Int64)?
        while true {
            let cursor = after
            let rows = try await database.withConnection { db in
                var query = Self.select(on: db)
                if let cursor {
                    query = query.where(SQLGroupExpression([SQLColumn("subject_id"), SQLColumn("seq")]), .greaterThan, SQLGroupExpression([SQLBind(cursor.0), SQLBind(cursor.1)]))
                }
                return try await query.orderBy("subject_id").orderBy("seq").limit(pageSize).all()
            }
            var page: [AuditEntry] = []
            page.reserveCapacity(rows.count)
            for row in rows {
                do {
                    page.append(try Self.entry(row))
                } catch {
                    verdict.firstBreak = .init(subject: try? row.decode(column: "subject_id", as: UUID.self), seq: (try? row.decode(column: "seq", as: Int64.self)) ?? 0, reason: "the entry cannot be read (\(error))")
                    return verdict
                }
            }
            let newSubjects = Array(Set(page.map(\.subjectID)).subtracting(seen))
            var pageDigests: [UUID: [Int64: (hash: String, at: Date, keyID: String, mac: String, previous: String?)]] = [:]
            for start in stride(from: 0, to: newSubjects.count, by: 500) {
                let chunk = Array(newSubjects[start..<min(start + 500, newSubjects.count)])
                let digestRows = try await database.withConnection { db in
                    try await db.select().columns("subject_id", "seq", "hash", "at", "key_id", "mac", "prev_mac").from("audit_digests").where("subject_id", .in, chunk).all()
                }
                for row in digestRows {
                    pageDigests[try row.decode(column: "subject_id", as: UUID.self), default: [:]][try row.decode(column: "seq", as: Int64.self)] = (
                        try row.decode(column: "hash", as: String.self), try row.decode(column: "at", as: Date.self),
                        try row.decode(column: "key_id", as: String.self), try row.decode(column: "mac", as: String.self),
                        try row.decode(column: "prev_mac", as: String?.self)
                    )
                }
            }
            for entry in page {
                if entry.subjectID != subject {
                    if let broken = endOfChain() {
                        verdict.firstBreak = broken
                        return verdict
                    }
                    subject = entry.subjectID
                    seen.insert(entry.subjectID)
                    verdict.chains += 1
                    previous = (0, AuditChain.genesis)
                    digests = pageDigests[entry.subjectID] ?? [:]
                    lastDigest = 0
                    if let keys {
                        var previousMAC = ""
                        for (seq, digest) in digests.sorted(by: { $0.key < $1.key }) {
                            guard let key = keys[digest.keyID],
                                AuditDigests.mac(subject: entry.subjectID, seq: seq, hash: digest.hash, at: digest.at, key: key, previous: digest.previous) == digest.mac
                            else {
                                verdict.firstBreak = .init(subject: entry.subjectID, seq: seq, reason: "its digest is not signed by the audit key (the digest was forged or altered)")
                                return verdict
                            }
                            // A chained digest names the one before it: none may be missing.
                            if let linked = digest.previous, linked != previousMAC {
                                verdict.firstBreak = .init(subject: entry.subjectID, seq: seq, reason: "a signed digest before this one is missing (digests were deleted)")
                                return verdict
                            }
                            previousMAC = digest.mac
                        }
                    }
                }
                if let broken = AuditChain.firstBreak(in: [entry], after: previous) {
                    verdict.firstBreak = broken
                    return verdict
                }
                if let digest = digests[entry.seq] {
                    guard digest.hash == entry.hash else {
                        verdict.firstBreak = .init(
                            subject: entry.subjectID, seq: entry.seq,
                            reason: "the entry is not the one the signed digest of \(digest.at.formatted(.iso8601)) names (the chain was rewritten)"
                        )
                        return verdict
                    }
                    verdict.digests += 1
                    lastDigest = entry.seq
                }
                previous = (entry.seq, entry.hash)
                verdict.entries += 1
            }
            guard let last = page.last, page.count == pageSize else { break }
            after = (last.subjectID, last.seq)
        }
        if let broken = endOfChain() {
            verdict.firstBreak = broken
            return verdict
        }
        if let lost = heads.keys.first(where: { !seen.contains($0) }) {
            verdict.firstBreak = .init(subject: lost, seq: 1, reason: "the chain's head names \(heads[lost]!.seq) entries but none is there (the chain was deleted)")
            return verdict
        }
        let signedSubjects = try await database.withConnection { db in
            try await db.select().distinct().column("subject_id").from("audit_digests").all().map { try $0.decode(column: "subject_id", as: UUID.self) }
        }
        if let lost = signedSubjects.first(where: { !seen.contains($0) }) {
            verdict.firstBreak = .init(subject: lost, seq: 1, reason: "signed digests name entries of this chain but none is there (the chain was deleted)")
        }
        return verdict
    }
}

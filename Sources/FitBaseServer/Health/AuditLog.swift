import FitBaseCore
import Foundation
import SQLKit

/// Appends to and reads the audit log: one hash chain per user. Appends of one user are serialized by their chain's
/// head row (`audit_heads`: a row lock on PostgreSQL, the single writer on SQLite), so a user's chain never forks and
/// users never wait for each other's chains. Refusals are not appended one by one: they are counted in memory and
/// written once a minute as one entry per user, action and resource, with the count (``flushRefusals(now:)``), so a
/// client hammering an endpoint it may not use writes nothing per request.
struct AuditLog: Sendable {
    let database: Database
    /// When entries appended outside a change are written.
    let clock: ServerClock
    let refusals: AuditRefusals
    private let queue: AuditQueue

    init(database: Database, clock: ServerClock, refusals: AuditRefusals = AuditRefusals()) {
        self.database = database
        self.clock = clock
        self.refusals = refusals
        self.queue = AuditQueue()
    }

    /// Appends inside the caller's transaction (so the entry commits with the change it records), at `now` (the
    /// change's time).
    @discardableResult
    static func append(_ event: AuditEvent, now: Date, on db: any SQLDatabase, engine: DatabaseEngine) async throws -> AuditEntry {
        var entry = AuditEntry(
            seq: 1, at: event.at ?? now, actorID: event.actor?.rawValue, subjectID: event.subject.rawValue, action: event.action.rawValue,
            resource: event.resource.rawValue, count: event.count, requestID: event.requestID, clientRequestID: event.clientRequestID,
            outcome: event.outcome.rawValue, prevHash: AuditChain.genesis, hash: ""
        )
        if engine == .postgres {
            // One statement: the head moves and chains the entry from its own last hash, and the entry goes in.
            let json = AuditChain.canonicalJSONParts(of: entry)
            let chained = try await appendChained(
                entry.subjectID, json.before, json.between, json.after, entry.at, entry.actorID, entry.action, entry.resource, entry.count,
                entry.requestID, entry.clientRequestID, entry.outcome
            ).first(on: db)
            guard let chained else { throw AuditAppendFailed() }
            entry.seq = try chained.decode(column: "seq", as: Int64.self)
            entry.prevHash = try chained.decode(column: "prev_hash", as: String.self)
            entry.hash = try chained.decode(column: "hash", as: String.self)
            return entry
        }
        // The chain's next position and last hash, claimed by moving its head: the row stays locked until commit.
        let head = try await claimHead(event.subject.rawValue, 1, 1).first(on: db)
        entry.seq = try head?.decode(column: "seq", as: Int64.self) ?? 1
        entry.prevHash = try head?.decode(column: "hash", as: String.self) ?? AuditChain.genesis
        entry.hash = AuditChain.hash(of: entry)
        try await insert(entry, on: db)  // the head's hash follows (``MoveAuditHeadsWithTheirEntries``)
        return entry
    }

    /// PostgreSQL: appends one entry in one round trip. The head's row moves one position on and takes the new hash,
    /// computed by PostgreSQL from the head's last hash and the entry's canonical JSON cut around that hash and the
    /// position (``AuditChain/canonicalJSONParts(of:)``: binds 2–4); `prev_hash` keeps the hash it followed, which the
    /// entry's row and `RETURNING` take. A chain's first entry makes its head at position 1 after the genesis hash.
    /// Binds: subject, the three parts, then the entry's other columns in table order.
    private static let appendChained = StoredStatement(
        postgresOnly: #"WITH "head" AS (INSERT INTO "audit_heads" ("subject_id", "seq", "hash", "prev_hash", "digested_seq") VALUES ($1::uuid, 1, "#
            + chainedHash(previous: "'\(AuditChain.genesis)'", seq: "'1'") + #", '\#(AuditChain.genesis)', 0) "#
            + #"ON CONFLICT ("subject_id") DO UPDATE SET "seq" = "audit_heads"."seq" + 1, "prev_hash" = "audit_heads"."hash", "hash" = "#
            + chainedHash(previous: #""audit_heads"."hash""#, seq: #"("audit_heads"."seq" + 1)::text"#) + #" RETURNING "seq", "prev_hash", "hash") "#
            + #"INSERT INTO "audit_entries" ("subject_id", "seq", "at", "actor_id", "action", "resource", "count", "request_id", "client_request_id", "#
            + #""outcome", "prev_hash", "hash") SELECT $1, "seq", $5::timestamptz, $6::uuid, $7::text, $8::text, "#
            + #"$9::integer, $10::text, $11::text, $12::text, "prev_hash", "hash" FROM "head" "#
            + #"RETURNING "seq", "prev_hash", "hash""#
    )

    /// `hex(SHA-256(previous ‖ before ‖ previous ‖ between ‖ seq ‖ after))` in SQL: ``AuditChain``'s rule over the parts.
    private static func chainedHash(previous: String, seq: String) -> String {
        "encode(sha256(convert_to(\(previous), 'UTF8') || $2::bytea || convert_to(\(previous), 'UTF8') || $3::bytea || convert_to(\(seq), 'UTF8') || $4::bytea), 'hex')"
    }

    /// The append statement answered no row (it always answers one).
    struct AuditAppendFailed: Error {}

    /// Appends `event` with the commit of the caller's transaction: once every transaction of the transaction's
    /// commit group has run (``TransactionHooks/audit(_:)``; SQLite's ``GroupCommit``, PostgreSQL's
    /// ``KeyedCommitGroups``), so a group's entries go in one run per chain, two or three statements for a dozen
    /// logged workouts instead of one or two each. The entry keeps `now` as its time and the request's ids; it is
    /// appended only if the transaction's own work was kept (a member rolled back to its savepoint leaves nothing).
    /// Outside a transaction it is appended at once.
    static func appendAtCommit(_ event: AuditEvent, now: Date, on db: any SQLDatabase, engine: DatabaseEngine) async throws {
        guard let hooks = TransactionHooks.current else {
            try await append(event, now: now, on: db, engine: engine)
            return
        }
        var event = event
        event.at = now
        hooks.audit(event)
    }

    private static let setHeadHash = StoredStatement(#"UPDATE "audit_heads" SET "hash" = ? WHERE "subject_id" = ?"#)

    /// Moves a chain's head `n` positions on (made at position `n` for a chain's first entries; binds: subject, n, n),
    /// answering the new position and the hash the claimed positions follow.
    private static let claimHead = StoredStatement(
        #"INSERT INTO "audit_heads" ("subject_id", "seq", "hash", "digested_seq") VALUES (?, ?, '\#(AuditChain.genesis)', 0) "#
            + #"ON CONFLICT ("subject_id") DO UPDATE SET "seq" = "audit_heads"."seq" + ? RETURNING "seq", "hash""#
    )

    /// Appends `events`, all about one subject, in their order, inside the caller's transaction: the head moves once for
    /// all of them and the entries go in one statement (250 a statement), so a batch of one user's reads costs three
    /// statements (two on SQLite, where the head's hash follows the last entry), not two per entry. Each entry is
    /// chained to the one before exactly as one appended alone.
    @discardableResult
    static func append(run events: [AuditEvent], now: Date, on db: any SQLDatabase, engine: DatabaseEngine) async throws -> [AuditEntry] {
        guard let subject = events.first?.subject else { return [] }
        precondition(events.allSatisfy { $0.subject == subject }, "one chain per run")
        if events.count == 1 { return [try await append(events[0], now: now, on: db, engine: engine)] }
        let head = try await claimHead(subject.rawValue, events.count, events.count).first(on: db)
        let last = try head?.decode(column: "seq", as: Int64.self) ?? Int64(events.count)
        var previous = try head?.decode(column: "hash", as: String.self) ?? AuditChain.genesis
        var entries: [AuditEntry] = []
        entries.reserveCapacity(events.count)
        for (offset, event) in events.enumerated() {
            var entry = AuditEntry(
                seq: last - Int64(events.count) + 1 + Int64(offset), at: event.at ?? now, actorID: event.actor?.rawValue, subjectID: subject.rawValue,
                action: event.action.rawValue, resource: event.resource.rawValue, count: event.count, requestID: event.requestID,
                clientRequestID: event.clientRequestID, outcome: event.outcome.rawValue, prevHash: previous, hash: ""
            )
            entry.hash = AuditChain.hash(of: entry)
            previous = entry.hash
            entries.append(entry)
        }
        for start in stride(from: 0, to: entries.count, by: 250) {
            let chunk = entries[start..<min(start + 250, entries.count)]
            var binds: [any Encodable & Sendable] = []
            binds.reserveCapacity(chunk.count * 12)
            for entry in chunk {
                binds.append(contentsOf: [
                    entry.subjectID, entry.seq, entry.at, entry.actorID, entry.action, entry.resource, entry.count, entry.requestID,
                    entry.clientRequestID, entry.outcome, entry.prevHash, entry.hash,
                ] as [any Encodable & Sendable])
            }
            try await insertEntries(rows: chunk.count, binds).run(on: db)
        }
        // SQLite: the last entry's insert set the head's hash (``MoveAuditHeadsWithTheirEntries``).
        if engine == .postgres { try await setHeadHash(previous, subject.rawValue).run(on: db) }
        return entries
    }

    /// Appends `events` (any subjects) inside the caller's transaction, or as one atomic statement on PostgreSQL: the
    /// chains' heads taken in one order (``inHeadOrder(_:)``). PostgreSQL: every entry in one statement, chained there
    /// one after another (``AddAuditAppendFunction``: a batch of reads of many users is one round trip, not one per
    /// chain). SQLite: each chain's run in one go (``append(run:now:on:engine:)``).
    static func append(all events: [AuditEvent], now: Date, on db: any SQLDatabase, engine: DatabaseEngine) async throws {
        if engine == .postgres {
            guard !events.isEmpty else { return }
            let ordered = inHeadOrder(events)
            let entries = ordered.map { event in
                AuditEntry(
                    seq: 1, at: event.at ?? now, actorID: event.actor?.rawValue, subjectID: event.subject.rawValue, action: event.action.rawValue,
                    resource: event.resource.rawValue, count: event.count, requestID: event.requestID, clientRequestID: event.clientRequestID,
                    outcome: event.outcome.rawValue, prevHash: AuditChain.genesis, hash: ""
                )
            }
            let parts = entries.map(AuditChain.canonicalJSONParts(of:))
            try await appendAll(
                try PostgresArray(entries.map(\.subjectID)), try PostgresArray(parts.map(\.before)), try PostgresArray(parts.map(\.between)),
                try PostgresArray(parts.map(\.after)), try PostgresArray(entries.map(\.at)), try PostgresArray(entries.map(\.actorID)),
                try PostgresArray(entries.map(\.action)), try PostgresArray(entries.map(\.resource)), try PostgresArray(entries.map { Int64($0.count) }),
                try PostgresArray(entries.map(\.requestID)), try PostgresArray(entries.map(\.clientRequestID)), try PostgresArray(entries.map(\.outcome))
            ).run(on: db)
            return
        }
        var run: [AuditEvent] = []
        for event in inHeadOrder(events) {
            if let first = run.first, first.subject != event.subject {
                try await append(run: run, now: now, on: db, engine: engine)
                run.removeAll(keepingCapacity: true)
            }
            run.append(event)
        }
        try await append(run: run, now: now, on: db, engine: engine)
    }

    /// PostgreSQL: ``AddAuditAppendFunction``'s function over the entries' columns, each bound as one array.
    private static let appendAll = StoredStatement(
        postgresOnly: #"SELECT "fitbase_audit_append"($1::uuid[], $2::bytea[], $3::bytea[], $4::bytea[], $5::timestamptz[], $6::uuid[], "#
            + #"$7::text[], $8::text[], $9::bigint[], $10::text[], $11::text[], $12::text[])"#
    )

    private static let insertEntries = StoredRowsStatement(
        head: #"INSERT INTO "audit_entries" ("subject_id", "seq", "at", "actor_id", "action", "resource", "count", "request_id", "#
            + #""client_request_id", "outcome", "prev_hash", "hash") VALUES "#,
        row: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
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
        let (database, clock) = (self.database, self.clock)
        try await queue.append(event) { events in
            let engine = database.engine
            let now = clock.now
            // PostgreSQL: the batch is one statement, atomic by itself: no BEGIN and COMMIT round trips around it.
            if engine == .postgres {
                try await database.withConnection { db in try await Self.append(all: events, now: now, on: db, engine: engine) }
                return
            }
            try await database.transaction { db in try await Self.append(all: events, now: now, on: db, engine: engine) }
        }
    }

    /// `events` ordered by subject (each subject's in their order): every transaction that appends for several users
    /// takes their chains' heads in one order, so two such transactions (two instances' group commits) cannot each
    /// hold a head the other waits for.
    /// (Ordered by the subjects' upper-case text, as earlier versions did, each written once, not per comparison.)
    static func inHeadOrder(_ events: [AuditEvent]) -> [AuditEvent] {
        guard let first = events.first?.subject, events.contains(where: { $0.subject != first }) else { return events }
        return events.enumerated().map { (subject: $0.element.subject.rawValue.uppercasedString, offset: $0.offset, event: $0.element) }
            .sorted { ($0.subject, $0.offset) < ($1.subject, $1.offset) }.map(\.event)
    }

    /// Writes the refusals counted since the last flush: one entry per user, action and resource, with the count;
    /// returns how many entries.
    @discardableResult
    func flushRefusals() async throws -> Int {
        let pending = refusals.take()
        guard !pending.isEmpty else { return 0 }
        let engine = database.engine
        let now = clock.now
        do {
            try await database.transaction { db in try await Self.append(all: pending, now: now, on: db, engine: engine) }
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

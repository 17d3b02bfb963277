import FitBaseCore
import Foundation
import SQLKit
import Synchronization

/// A row as stored: clear fields and the ciphertext.
struct SealedSample: Sendable {
    var id: HealthSampleID
    var type: HealthSampleType
    var start: Date
    var end: Date?
    var keyID: String
    var sealed: Data

    /// What the ciphertext is bound to — the row's clear fields, so it cannot be moved to another row or user:
    /// `health_samples/<user>/<id>/<type>/<start ms>/<end ms or ->` in ASCII. Times enter in whole milliseconds: the
    /// engines keep microseconds but may round or truncate the last one differently. Built byte by byte, as opening a
    /// year of samples builds half a million of these.
    static func binding(user: UserID, id: HealthSampleID, type: HealthSampleType, start: Date, end: Date?) -> [UInt8] {
        var bytes = Array("health_samples/".utf8)
        bytes.reserveCapacity(128)
        appendLowercaseHex(user.rawValue, to: &bytes)
        bytes.append(UInt8(ascii: "/"))
        appendLowercaseHex(id.rawValue, to: &bytes)
        bytes.append(UInt8(ascii: "/"))
        bytes.append(contentsOf: type.rawValue.utf8)
        bytes.append(UInt8(ascii: "/"))
        bytes.append(contentsOf: String(Int64((start.timeIntervalSince1970 * 1_000).rounded())).utf8)
        bytes.append(UInt8(ascii: "/"))
        if let end { bytes.append(contentsOf: String(Int64((end.timeIntervalSince1970 * 1_000).rounded())).utf8) } else { bytes.append(UInt8(ascii: "-")) }
        return bytes
    }

    /// A UUID as its lower-case canonical text (8-4-4-4-12).
    private static func appendLowercaseHex(_ id: UUID, to bytes: inout [UInt8]) {
        let digits = Array("0123456789abcdef".utf8)
        withUnsafeBytes(of: id.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if [4, 6, 8, 10].contains(index) { bytes.append(UInt8(ascii: "-")) }
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0F)])
            }
        }
    }
}

/// SQL for `health_samples`, always scoped to one user.
struct HealthSampleStore: Sendable {
    let database: Database

    /// Inserts the rows that are new, each with its feed entry (``SyncFeed/rowFeeds``): the `i`th row takes sequence
    /// number `firstSeq + i`, version 1 and the writer's `updatedAt`. Returns the ids inserted (an id already stored,
    /// by this user or another, is left as it is).
    static func insert(
        _ rows: [SealedSample], of user: UserID, firstSeq: Int, updatedAt: Date, now: Date, on db: any SQLDatabase
    ) async throws -> Set<HealthSampleID> {
        guard !rows.isEmpty else { return [] }
        if db.dialect.name == "postgresql" { return try await insertUnnested(rows, of: user, firstSeq: firstSeq, updatedAt: updatedAt, now: now, on: db) }
        var inserted: Set<HealthSampleID> = []
        inserted.reserveCapacity(rows.count)
        // 250 rows × 11 columns stays far below both engines' bind limits.
        for start in stride(from: 0, to: rows.count, by: 250) {
            let chunk = rows[start..<min(start + 250, rows.count)]
            var binds: [any Encodable & Sendable] = []
            binds.reserveCapacity(chunk.count * 11)
            for (offset, row) in zip(chunk.indices, chunk) {
                binds.append(row.id.rawValue)
                binds.append(user.rawValue)
                binds.append(row.type.rawValue)
                binds.append(row.start)
                binds.append(row.end)
                binds.append(row.keyID)
                binds.append(row.sealed)
                binds.append(now)
                binds.append(firstSeq + offset)
                binds.append(1)
                binds.append(updatedAt)
            }
            for row in try await insertRows(rows: chunk.count, binds).all(on: db) {
                inserted.insert(HealthSampleID(rawValue: try row.decode(column: "id", as: UUID.self)))
            }
        }
        return inserted
    }

    private static let insertRows = StoredRowsStatement(
        head: #"INSERT INTO "health_samples" ("id", "user_id", "type", "start_at", "end_at", "key_id", "sealed", "created_at", "seq", "version", "updated_at") VALUES "#,
        row: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", tail: #" ON CONFLICT ("id") DO NOTHING RETURNING "id""#
    )

    /// ``insert(_:of:firstSeq:updatedAt:now:on:)`` on PostgreSQL: the whole batch in one statement, each column of
    /// the rows bound as one array (``PostgresArray``) and taken apart by `unnest`, in the rows' order. Four statements
    /// of 2,750 binds each were most of an upload's time in PostgreSQL, parsing and type-checking the binds.
    ///
    /// The statement answers with the ids it did not insert (usually none) rather than the thousand it did: reading
    /// back a row per sample took longer than PostgreSQL took to store them, while the user's sequence row is held.
    private static func insertUnnested(
        _ rows: [SealedSample], of user: UserID, firstSeq: Int, updatedAt: Date, now: Date, on db: any SQLDatabase
    ) async throws -> Set<HealthSampleID> {
        let binds: [any Encodable & Sendable] = [
            try PostgresArray(rows.map(\.id.rawValue)),
            try PostgresArray(rows.map(\.type.rawValue)),
            try PostgresArray(rows.map(\.start)),
            try PostgresArray(rows.map(\.end)),
            try PostgresArray(rows.map(\.keyID)),
            try PostgresArray(rows.map(\.sealed)),
            user.rawValue, now, firstSeq, updatedAt,
        ]
        var inserted = Set(rows.map(\.id))
        for row in try await insertArrays.with(binds).all(on: db) {
            inserted.remove(HealthSampleID(rawValue: try row.decode(column: "id", as: UUID.self)))
        }
        return inserted
    }

    /// The `n`th row (from 1) takes sequence number `firstSeq + n - 1`; answers the ids left as they were.
    private static let insertArrays = StoredStatement(
        #"WITH "r" AS (SELECT * FROM unnest(?::uuid[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::text[], ?::bytea[]) "#
            + #"WITH ORDINALITY AS "r"("id", "type", "start_at", "end_at", "key_id", "sealed", "n")), "#
            + #""inserted" AS (INSERT INTO "health_samples" "#
            + #"("id", "user_id", "type", "start_at", "end_at", "key_id", "sealed", "created_at", "seq", "version", "updated_at") "#
            + #"SELECT "r"."id", ?, "r"."type", "r"."start_at", "r"."end_at", "r"."key_id", "r"."sealed", ?, ? + "r"."n" - 1, 1, ? FROM "r" "#
            + #"ON CONFLICT ("id") DO NOTHING RETURNING "id") "#
            + #"SELECT "id" FROM "r" WHERE "id" NOT IN (SELECT "id" FROM "inserted")"#
    )

    /// Of `ids`, those stored for a user other than `user`.
    static func takenByOthers(_ ids: [HealthSampleID], user: UserID, on db: any SQLDatabase) async throws -> Set<HealthSampleID> {
        guard !ids.isEmpty else { return [] }
        var taken: Set<HealthSampleID> = []
        for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
            for row in try await db.select().column("id").from("health_samples").where("id", .in, chunk.map(\.rawValue))
                .where("user_id", .notEqual, user.rawValue).all()
            {
                taken.insert(HealthSampleID(rawValue: try row.decode(column: "id", as: UUID.self)))
            }
        }
        return taken
    }

    /// Deletes the row of the user's sample, nothing else (``HealthSamplesCollection/delete(_:_:on:)`` is the delete
    /// with its feed entry); whether it was there.
    static func deleteRow(_ id: HealthSampleID, of user: UserID, on db: any SQLDatabase) async throws -> (type: HealthSampleType, start: Date, version: Int)? {
        guard let row = try await db.delete(from: "health_samples").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue)
            .returning("type", "start_at", "version").first(),
            let type = HealthSampleType(rawValue: try row.decode(column: "type", as: String.self))
        else { return nil }
        return (type, try row.decode(column: "start_at", as: Date.self), try row.decode(column: "version", as: Int.self))
    }

    /// Up to `limit` of the user's samples of `type` sealed under `keyID` that start in `range`, in (start, id) order
    /// after `after` (keyset paging: each page is one indexed range read).
    static func page(
        of user: UserID, type: HealthSampleType, keyID: String, startingIn range: Range<Date>, after: (start: Date, id: UUID)?, limit: Int,
        on db: any SQLDatabase
    ) async throws -> [SealedSample] {
        var query = select(on: db).where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue).where("key_id", .equal, keyID)
            .where("start_at", .greaterThanOrEqual, range.lowerBound).where("start_at", .lessThan, range.upperBound)
        if let after {
            query = query.where { group in
                group.where("start_at", .greaterThan, after.start).orWhere { $0.where("start_at", .equal, after.start).where("id", .greaterThan, after.id) }
            }
        }
        return try await query.orderBy("start_at").orderBy("id").limit(limit).all().map(sample)
    }

    /// Samples of `user` with these ids.
    static func samples(_ ids: [HealthSampleID], of user: UserID, on db: any SQLDatabase) async throws -> [SealedSample] {
        guard !ids.isEmpty else { return [] }
        return try await select(on: db).where("user_id", .equal, user.rawValue).where("id", .in, ids.map(\.rawValue)).all().map(sample)
    }

    /// A page of the user's samples, newest first, of `type` if given, with `from ≤ start < to`.
    func samples(of user: UserID, type: HealthSampleType?, from: Date?, to: Date?, offset: Int, limit: Int) async throws -> [SealedSample] {
        try await database.withConnection { db in
            var query = Self.select(on: db).where("user_id", .equal, user.rawValue)
            if let type { query = query.where("type", .equal, type.rawValue) }
            if let from { query = query.where("start_at", .greaterThanOrEqual, from) }
            if let to { query = query.where("start_at", .lessThan, to) }
            return try await query.orderBy("start_at", .descending).orderBy("id").offset(offset).limit(limit).all().map(Self.sample)
        }
    }

    /// Every sample of `user` of `type` sealed under `keyID` that may overlap [from, to): started before `to` and at
    /// most 24 hours (the longest interval) before `from`. Only what a summary needs is read, row by row.
    func samples(of user: UserID, type: HealthSampleType, keyID: String, overlapping from: Date, _ to: Date) async throws -> [SealedSample] {
        try await database.withConnection { db in
            // Rows are decoded as they arrive instead of first holding every row the driver returns.
            let collected = Mutex<(rows: [SealedSample], failure: (any Error)?)>(([], nil))
            try await db.select().columns("id", "start_at", "end_at", "sealed").from("health_samples")
                .where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue).where("key_id", .equal, keyID)
                .where("start_at", .greaterThanOrEqual, from.addingTimeInterval(-86_400)).where("start_at", .lessThan, to)
                .run { row in
                    let decoded = Result {
                        SealedSample(
                            id: HealthSampleID(rawValue: try row.decode(column: "id", as: UUID.self)), type: type, start: try row.decode(column: "start_at", as: Date.self),
                            end: try row.decode(column: "end_at", as: Date?.self), keyID: keyID, sealed: try row.decode(column: "sealed", as: Data.self)
                        )
                    }
                    collected.withLock { state in
                        switch decoded {
                        case .success(let sample): state.rows.append(sample)
                        case .failure(let error): state.failure = state.failure ?? error
                        }
                    }
                }
            return try collected.withLock { state in
                if let failure = state.failure { throw failure }
                return state.rows
            }
        }
    }

    /// The user's samples of `type` sealed under `keyID` that start in `range`.
    func samples(of user: UserID, type: HealthSampleType, keyID: String, startingIn range: Range<Date>) async throws -> [SealedSample] {
        try await database.withConnection { db in
            try await Self.select(on: db).where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue).where("key_id", .equal, keyID)
                .where("start_at", .greaterThanOrEqual, range.lowerBound).where("start_at", .lessThan, range.upperBound)
                .all().map(Self.sample)
        }
    }

    /// The user's samples of `type` sealed under `keyID` that last a while (end after start) and may overlap
    /// [from, to): started before `to` and at most 24 hours (the longest interval) before `from`.
    func intervals(of user: UserID, type: HealthSampleType, keyID: String, overlapping from: Date, _ to: Date) async throws -> [SealedSample] {
        try await database.withConnection { db in
            try await Self.select(on: db).where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue).where("key_id", .equal, keyID)
                .where("start_at", .greaterThanOrEqual, from.addingTimeInterval(-86_400)).where("start_at", .lessThan, to)
                .where(SQLColumn("end_at"), .greaterThan, SQLColumn("start_at"))
                .all().map(Self.sample)
        }
    }

    /// Every sample of `user`, oldest first (export).
    static func all(of user: UserID, on db: any SQLDatabase) async throws -> [SealedSample] {
        try await select(on: db).where("user_id", .equal, user.rawValue).orderBy("start_at").orderBy("id").all().map(sample)
    }

    /// The next `limit` of `user`'s samples in the order they were stored (their feed numbers), after the one numbered
    /// `after`, and the last one's number: a range of the `(user_id, seq)` index, so the export reads an account of
    /// any size a page at a time, each page costing the same.
    static func page(of user: UserID, after: Int, limit: Int, on db: any SQLDatabase) async throws -> (samples: [SealedSample], lastSeq: Int?) {
        let rows = try await select(on: db).column("seq").where("user_id", .equal, user.rawValue).where("seq", .greaterThan, after)
            .orderBy("seq").limit(limit).all()
        return (try rows.map(sample), try rows.last?.decode(column: "seq", as: Int.self))
    }

    private static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns("id", "type", "start_at", "end_at", "key_id", "sealed").from("health_samples")
    }

    private static func sample(_ row: any SQLRow) throws -> SealedSample {
        SealedSample(
            id: HealthSampleID(rawValue: try row.decode(column: "id", as: UUID.self)),
            type: HealthSampleType(rawValue: try row.decode(column: "type", as: String.self)) ?? .heartRate,
            start: try row.decode(column: "start_at", as: Date.self), end: try row.decode(column: "end_at", as: Date?.self),
            keyID: try row.decode(column: "key_id", as: String.self), sealed: try row.decode(column: "sealed", as: Data.self)
        )
    }
}

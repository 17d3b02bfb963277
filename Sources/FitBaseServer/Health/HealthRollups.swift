import FitBaseCore
import Foundation
import SQLKit

/// Keeps the slot totals of every user's samples, exactly.
///
/// * Storing samples adds the new ones to their slots' totals (``add(_:of:key:vault:on:)``), in the transaction that
///   stores them, after their feed entries.
/// * Deleting a sample marks its slot stale (``markStale(type:start:of:on:)``): no key is needed to delete, and the
///   totals cannot be taken apart again (a minimum is not undone).
/// * Before a summary reads totals, ``repair(_:type:key:vault:)`` rebuilds the stale slots from their samples (and every
///   slot of a user still pending).
///
/// Each of these writes runs after the user's feed row is taken (``SyncFeed/lockSequence(of:on:)`` or a feed entry),
/// so two of them for one user never interleave on PostgreSQL: a repair sees every sample committed before it, and an
/// addition sees the repaired totals. Totals sealed under another key than the user's current one (left by a
/// crypto-shredding) count as empty.
struct HealthRollups: Sendable {
    let database: Database

    /// A newly stored sample: its clear fields and its value.
    struct Addition: Sendable {
        var type: HealthSampleType
        var start: Date
        var end: Date?
        var value: HealthValue
    }

    // MARK: Writing

    /// Adds newly stored samples to their slots' totals.
    static func add(_ samples: [Addition], of user: UserID, key: HealthVault.DataKey, vault: HealthVault, on db: any SQLDatabase) async throws {
        var additions: [SlotKey: HealthSlotTotals] = [:]
        for sample in samples {
            let slot = SlotKey(type: sample.type, slot: HealthSlots.slot(of: sample.start))
            var totals = additions[slot] ?? HealthSlotTotals()
            if totals.add(sample.value, start: sample.start, end: sample.end) { additions[slot] = totals }
        }
        guard !additions.isEmpty else { return }
        for type in Set(additions.keys.map(\.type)) {
            let slots = additions.keys.filter { $0.type == type }.map(\.slot)
            let stored = try await rows(of: user, type: type, slots: slots, on: db)
            var merged: [(slot: Int64, totals: HealthSlotTotals, stale: Bool)] = []
            for slot in slots {
                var totals = additions[SlotKey(type: type, slot: slot)]!
                let existing = stored[slot]
                if let existing, !existing.stale, existing.keyID == key.id {
                    totals.merge(try open(existing.sealed, user: user, type: type, slot: slot, key: key, vault: vault))
                }
                // A stale slot stays stale: its repair recounts every sample, these included.
                merged.append((slot, totals, existing?.stale ?? false))
            }
            try await upsert(merged, type: type, of: user, key: key, vault: vault, on: db)
        }
    }

    /// Marks the slot of a deleted sample stale, if its totals could hold it.
    static func markStale(type: HealthSampleType, start: Date, of user: UserID, on db: any SQLDatabase) async throws {
        guard type != .sleep else { return }
        try await db.update("health_rollups").set("stale", to: true)
            .where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue).where("slot", .equal, HealthSlots.slot(of: start))
            .run()
    }

    /// Every rollup of the user, and the pending mark (account deletion, crypto-shredding).
    static func deleteAll(of user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "health_rollups").where("user_id", .equal, user.rawValue).run()
        try await db.delete(from: "health_rollups_pending").where("user_id", .equal, user.rawValue).run()
    }

    // MARK: Repairing

    /// Rebuilds what is not exact before a summary of `type` reads totals: every slot of a user still pending (all
    /// types), else the stale slots of `type`. Cheap when there is nothing to do (two indexed lookups).
    func repair(_ user: UserID, type: HealthSampleType, key: HealthVault.DataKey, vault: HealthVault) async throws {
        let needed = try await database.withConnection { db in
            let pending = try await db.select().column("user_id").from("health_rollups_pending").where("user_id", .equal, user.rawValue).first() != nil
            let stale = pending ? false : try await db.select().column("slot").from("health_rollups")
                .where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue).where("stale", .equal, true).limit(1).first() != nil
            return pending || stale
        }
        guard needed else { return }
        try await database.transaction { db in
            try await SyncFeed.lockSequence(of: user, on: db)
            let pending = try await db.delete(from: "health_rollups_pending").where("user_id", .equal, user.rawValue).returning("user_id").all()
            if !pending.isEmpty {
                try await db.delete(from: "health_rollups").where("user_id", .equal, user.rawValue).run()
                for type in HealthSampleType.allCases where type != .sleep {
                    try await Self.rebuild(type: type, slots: nil, of: user, key: key, vault: vault, on: db)
                }
                return
            }
            let stale = try await db.select().column("slot").from("health_rollups")
                .where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue).where("stale", .equal, true)
                .all().map { try $0.decode(column: "slot", as: Int64.self) }
            try await Self.rebuild(type: type, slots: stale, of: user, key: key, vault: vault, on: db)
        }
    }

    /// Recounts the totals of `slots` (every slot when `nil`) from the samples sealed under `key`, in pages.
    private static func rebuild(
        type: HealthSampleType, slots: [Int64]?, of user: UserID, key: HealthVault.DataKey, vault: HealthVault, on db: any SQLDatabase
    ) async throws {
        var ranges: [Range<Date>] = []
        if let slots {
            guard !slots.isEmpty else { return }
            // Neighbouring slots are read together.
            var runs: [(lower: Int64, upper: Int64)] = []
            for slot in slots.sorted() {
                if let last = runs.last, last.upper == slot { runs[runs.count - 1].upper = slot + 1 } else { runs.append((slot, slot + 1)) }
            }
            ranges = runs.map { HealthSlots.start(of: $0.lower)..<HealthSlots.start(of: $0.upper) }
        } else {
            ranges = [Date.distantPast..<Date.distantFuture]
        }
        var totals: [Int64: HealthSlotTotals] = [:]
        for range in ranges {
            var after: (start: Date, id: UUID)?
            while true {
                let page = try await HealthSampleStore.page(
                    of: user, type: type, keyID: key.id, startingIn: range,
                    after: after, limit: 10_000, on: db
                )
                for row in page {
                    let value = try HealthSampleCodec.decodeValue(
                        try vault.open(row.sealed, with: key, binding: SealedSample.binding(user: user, id: row.id, type: row.type, start: row.start, end: row.end))
                    )
                    var slotTotals = totals[HealthSlots.slot(of: row.start)] ?? HealthSlotTotals()
                    if slotTotals.add(value, start: row.start, end: row.end) { totals[HealthSlots.slot(of: row.start)] = slotTotals }
                }
                guard page.count == 10_000, let last = page.last else { break }
                after = (last.start, last.id.rawValue)
            }
        }
        if let slots {
            // A slot left without samples loses its row.
            let emptied = slots.filter { totals[$0] == nil }
            for chunk in stride(from: 0, to: emptied.count, by: 500).map({ Array(emptied[$0..<min($0 + 500, emptied.count)]) }) {
                try await db.delete(from: "health_rollups").where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue)
                    .where("slot", .in, chunk).run()
            }
        }
        try await upsert(totals.map { ($0.key, $0.value, false) }, type: type, of: user, key: key, vault: vault, on: db)
    }

    // MARK: Reading

    /// The totals of the user's `type` in `slots`, opened (slots without samples are absent). Call
    /// ``repair(_:type:key:vault:)`` first.
    func totals(of user: UserID, type: HealthSampleType, slots: Range<Int64>, key: HealthVault.DataKey, vault: HealthVault) async throws -> [Int64: HealthSlotTotals] {
        guard !slots.isEmpty else { return [:] }
        let rows = try await database.withConnection { db in
            try await db.select().columns("slot", "key_id", "sealed").from("health_rollups")
                .where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue)
                .where("slot", .greaterThanOrEqual, slots.lowerBound).where("slot", .lessThan, slots.upperBound)
                .all()
                .map { row in
                    (slot: try row.decode(column: "slot", as: Int64.self), keyID: try row.decode(column: "key_id", as: String.self),
                     sealed: try row.decode(column: "sealed", as: Data.self))
                }
        }
        var totals: [Int64: HealthSlotTotals] = [:]
        totals.reserveCapacity(rows.count)
        for row in rows where row.keyID == key.id {
            totals[row.slot] = try Self.open(row.sealed, user: user, type: type, slot: row.slot, key: key, vault: vault)
        }
        return totals
    }

    // MARK: Rows

    private struct SlotKey: Hashable {
        var type: HealthSampleType
        var slot: Int64
    }

    private struct StoredRow {
        var keyID: String
        var sealed: Data
        var stale: Bool
    }

    /// The stored rows of `slots`, read a range of slots at a time.
    ///
    /// Each read is also bounded by its first and last slot: PostgreSQL plans a table it has not analyzed yet (a new
    /// deployment, or an account's year of data uploaded within the minute) as if it held one row per user and type,
    /// and then applied `slot IN (…)` as a filter over every slot of the user. Uploading a year of minute-level heart
    /// rate read the 35,000 slots already stored for each batch (a third of PostgreSQL's time), more with every batch.
    private static func rows(of user: UserID, type: HealthSampleType, slots: [Int64], on db: any SQLDatabase) async throws -> [Int64: StoredRow] {
        var rows: [Int64: StoredRow] = [:]
        let slots = slots.sorted()
        for chunk in stride(from: 0, to: slots.count, by: 500).map({ Array(slots[$0..<min($0 + 500, slots.count)]) }) {
            guard let first = chunk.first, let last = chunk.last else { continue }
            for row in try await db.select().columns("slot", "key_id", "sealed", "stale").from("health_rollups")
                .where("user_id", .equal, user.rawValue).where("type", .equal, type.rawValue)
                .where("slot", .greaterThanOrEqual, first).where("slot", .lessThanOrEqual, last).where("slot", .in, chunk).all()
            {
                rows[try row.decode(column: "slot", as: Int64.self)] = StoredRow(
                    keyID: try row.decode(column: "key_id", as: String.self), sealed: try row.decode(column: "sealed", as: Data.self),
                    stale: try row.decode(column: "stale", as: Bool.self)
                )
            }
        }
        return rows
    }

    private static func upsert(
        _ slots: [(slot: Int64, totals: HealthSlotTotals, stale: Bool)], type: HealthSampleType, of user: UserID, key: HealthVault.DataKey,
        vault: HealthVault, on db: any SQLDatabase
    ) async throws {
        guard !slots.isEmpty else { return }
        if db.dialect.name == "postgresql" {
            // Every slot in one statement, a column an array (see ``HealthSampleStore``'s insert).
            let sealed = try slots.map { entry in
                try vault.seal(encode(entry.totals), with: key, binding: binding(user: user, type: type, slot: entry.slot))
            }
            let binds: [any Encodable & Sendable] = [
                user.rawValue, type.rawValue, key.id, try PostgresArray(slots.map(\.slot)), try PostgresArray(sealed), try PostgresArray(slots.map(\.stale)),
            ]
            try await upsertArrays.with(binds).run(on: db)
            return
        }
        // 200 rows × 6 columns stays far below both engines' bind limits.
        for start in stride(from: 0, to: slots.count, by: 200) {
            var insert = db.insert(into: "health_rollups").columns("user_id", "type", "slot", "key_id", "sealed", "stale")
            for entry in slots[start..<min(start + 200, slots.count)] {
                let sealed = try vault.seal(encode(entry.totals), with: key, binding: binding(user: user, type: type, slot: entry.slot))
                insert = insert.values(
                    SQLBind(user.rawValue), SQLBind(type.rawValue), SQLBind(entry.slot), SQLBind(key.id), SQLBind(sealed), SQLBind(entry.stale)
                )
            }
            try await insert.onConflict(with: ["user_id", "type", "slot"]) { conflict in
                ["key_id", "sealed", "stale"].reduce(conflict) { $0.set(excludedValueOf: $1) }
            }.run()
        }
    }

    private static let upsertArrays = StoredStatement(
        #"INSERT INTO "health_rollups" ("user_id", "type", "slot", "key_id", "sealed", "stale") "#
            + #"SELECT ?, ?, "r"."slot", ?, "r"."sealed", "r"."stale" FROM unnest(?::bigint[], ?::bytea[], ?::boolean[]) AS "r"("slot", "sealed", "stale") "#
            + #"ON CONFLICT ("user_id", "type", "slot") DO UPDATE SET "#
            + #""key_id" = EXCLUDED."key_id", "sealed" = EXCLUDED."sealed", "stale" = EXCLUDED."stale""#
    )

    // MARK: Sealing

    /// What the ciphertext is bound to: `health_rollups/<user>/<type>/<slot>`, so totals cannot be moved to another
    /// slot, type or user.
    static func binding(user: UserID, type: HealthSampleType, slot: Int64) -> [UInt8] {
        Array("health_rollups/\(user.rawValue.lowercasedString)/\(type.rawValue)/\(slot)".utf8)
    }

    private static func open(_ sealed: Data, user: UserID, type: HealthSampleType, slot: Int64, key: HealthVault.DataKey, vault: HealthVault) throws -> HealthSlotTotals {
        try decode(try vault.open(sealed, with: key, binding: binding(user: user, type: type, slot: slot)))
    }

    static let version: UInt8 = 1

    /// Version, sample count, then count/min/max/sum of value, systolic and diastolic, then the sum: little-endian
    /// 64-bit integers and IEEE doubles, 113 bytes.
    static func encode(_ totals: HealthSlotTotals) -> Data {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(113)
        func integer(_ value: Int) { withUnsafeBytes(of: Int64(value).littleEndian) { bytes.append(contentsOf: $0) } }
        func double(_ value: Double) { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        integer(totals.sampleCount)
        for statistic in [totals.value, totals.systolic, totals.diastolic] {
            integer(statistic.count)
            double(statistic.min)
            double(statistic.max)
            double(statistic.sum)
        }
        double(totals.sum)
        return Data(bytes)
    }

    static func decode(_ data: Data) throws(HealthRollupCodingError) -> HealthSlotTotals {
        guard data.count == 113, data.first == version else { throw HealthRollupCodingError() }
        return data.withUnsafeBytes { raw in
            var offset = 1
            func word() -> UInt64 {
                defer { offset += 8 }
                return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            }
            func integer() -> Int { Int(Int64(bitPattern: word())) }
            func double() -> Double { Double(bitPattern: word()) }
            var totals = HealthSlotTotals()
            totals.sampleCount = integer()
            totals.value = HealthRunningStatistic(count: integer(), min: double(), max: double(), sum: double())
            totals.systolic = HealthRunningStatistic(count: integer(), min: double(), max: double(), sum: double())
            totals.diastolic = HealthRunningStatistic(count: integer(), min: double(), max: double(), sum: double())
            totals.sum = double()
            return totals
        }
    }
}

/// Opened totals that are not in the format this build writes.
struct HealthRollupCodingError: Error, CustomStringConvertible {
    var description: String { "health rollup totals in an unknown format" }
}

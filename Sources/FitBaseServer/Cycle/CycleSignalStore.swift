import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// SQL for `cycle_signals`, always scoped to one user; seals what it writes (under the same data key as periods) and
/// opens what it reads. The day is sealed too, so reads open every signal of the user and filter in memory: an account
/// holds at most ``maximumSignals``.
struct CycleSignalStore: Sendable {
    let database: Database
    let vault: HealthVault

    static let table = "cycle_signals"
    /// The most signals an account holds (about 18 years of a daily temperature, an LH strip and a mucus note).
    static let maximumSignals = 20_000

    /// What of a signal is sealed: its JSON as the API writes it, without the id.
    private struct Fields: Codable {
        var date: String
        var type: FertilitySignalType
        var result: String?
        var value: Double?
    }

    /// The sealed row of `signal` of `user`, under their data key (made on their first sensitive write).
    func sealed(_ signal: FertilitySignal, of user: UserID) async throws -> SealedFields {
        guard let key = try await vault.dataKey(of: user, creating: true) else { throw SealedFieldsError.noKey }
        let fields = Fields(date: signal.date.description, type: signal.type, result: signal.result, value: signal.celsius)
        return try vault.seal(fields, table: Self.table, id: signal.id.rawValue, of: user, with: key)
    }

    /// Every signal of `user`, oldest first.
    func signals(of user: UserID) async throws -> [FertilitySignal] {
        let rows = try await database.withConnection { db in try await Self.rows(of: user, on: db) }
        return try await open(rows, of: user)
    }

    /// Every signal of the pushing user, read once per push.
    func signals(_ reads: PushReads) async throws -> [FertilitySignal] {
        let user = reads.user
        return try await reads.once("cycle.signals") { try await self.signals(of: user) }
    }

    /// Signals of `user` with these ids (for the change feed).
    func signals(_ ids: [FertilitySignalID], of user: UserID, on db: any SQLDatabase) async throws -> [FertilitySignal] {
        guard !ids.isEmpty else { return [] }
        let rows = try await db.select().columns("id", "key_id", "sealed").from(Self.table)
            .where("user_id", .equal, user.rawValue).where("id", .in, ids.map(\.rawValue)).all()
        return try await open(rows, of: user)
    }

    static func rows(of user: UserID, on db: any SQLDatabase) async throws -> [any SQLRow] {
        try await db.select().columns("id", "key_id", "sealed").from(table).where("user_id", .equal, user.rawValue).all()
    }

    /// How many signals `user` has.
    static func count(of user: UserID, on db: any SQLDatabase) async throws -> Int {
        try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from(table)
            .where("user_id", .equal, user.rawValue).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Inserts or replaces the row of signal `id` of `user`; `id_taken` (nothing written) when the id is another
    /// user's signal: the statement itself checks the owner.
    static func upsert(_ id: FertilitySignalID, _ fields: SealedFields, of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        let written = try await db.insert(into: table)
            .columns("id", "user_id", "key_id", "sealed", "created_at", "updated_at")
            .values(SQLBind(id.rawValue), SQLBind(user.rawValue), SQLBind(fields.keyID), SQLBind(fields.sealed), SQLBind(now), SQLBind(now))
            .onConflict(with: ["id"]) { conflict in
                ["key_id", "sealed", "updated_at"].reduce(conflict) { $0.set(excludedValueOf: $1) }
                    .where(SQLColumn("user_id", table: table), .equal, SQLColumn("user_id", table: "excluded"))
            }
            .returning("id").first()
        guard written != nil else { throw RecordIDTaken() }
    }

    /// Deletes the row if it is the user's; whether it was there.
    static func deleteRow(_ id: FertilitySignalID, of user: UserID, on db: any SQLDatabase) async throws -> Bool {
        !(try await db.delete(from: table).where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue).returning("id").all()).isEmpty
    }

    /// Opens rows of `user`, oldest first (then by id). Rows sealed under a key that is no longer the user's were
    /// crypto-shredded and are left out.
    func open(_ rows: [any SQLRow], of user: UserID) async throws -> [FertilitySignal] {
        guard !rows.isEmpty, let key = try await vault.dataKey(of: user, creating: false) else { return [] }
        var signals: [FertilitySignal] = []
        signals.reserveCapacity(rows.count)
        for row in rows {
            let id = FertilitySignalID(rawValue: try row.decode(column: "id", as: UUID.self))
            let sealed = SealedFields(keyID: try row.decode(column: "key_id", as: String.self), sealed: try row.decode(column: "sealed", as: Data.self))
            guard sealed.keyID == key.id else { continue }
            let fields = try vault.open(Fields.self, sealed, table: Self.table, id: id.rawValue, of: user, with: key)
            // Written by this store after the rules passed: checked again, so a damaged row fails loudly instead of
            // turning into some other reading.
            let draft = FertilitySignalDraft(date: fields.date, type: fields.type.rawValue, result: fields.result, value: fields.value)
            let day = CalendarDay(fields.date) ?? CalendarDay(daysSince1970: 0)
            signals.append(try FertilitySignalRules.checked(draft, id: id, today: day))
        }
        return signals.sorted { ($0.date, $0.id.description) < ($1.date, $1.id.description) }
    }
}

/// Fertility signals in the account export (opened) and deletion (the rows; the data key that sealed them is destroyed
/// with the account's health data, so copies elsewhere are unreadable too).
struct CycleSignalsOwner: InMemoryAccountDataOwner {
    let store: CycleSignalStore
    let audit: AuditLog
    let section = "cycleSignals"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let opened = try await store.open(try await CycleSignalStore.rows(of: user, on: db), of: user)
        if !opened.isEmpty {
            try await audit.append(AuditEvent(actor: user, subject: user, action: .export, resource: .cycleSignals, count: opened.count))
        }
        return try .exportList(opened) { signal in
            ["date": signal.date.description, "type": signal.type.rawValue, "result": signal.result, "value": signal.celsius, "unit": signal.celsius.map { _ in "celsius" }]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: CycleSignalStore.table).where("user_id", .equal, user.rawValue).run()
    }
}

import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// A period as stored: the blind index of its first day and the rest sealed.
struct SealedPeriod: Sendable {
    var id: PeriodID
    var startKey: String
    var fields: SealedFields
}

/// SQL for `cycle_periods`, always scoped to one user; seals what it writes and opens what it reads.
struct CycleStore: Sendable {
    let database: Database
    let vault: HealthVault

    static let table = "cycle_periods"
    /// The most periods an account holds (about 80 years of them): bounds every read of them, the history included.
    static let maximumPeriods = 1_000

    /// How many periods `user` has.
    static func count(of user: UserID, on db: any SQLDatabase) async throws -> Int {
        try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("cycle_periods")
            .where("user_id", .equal, user.rawValue).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// What of a period is sealed.
    private struct Fields: Codable {
        var start: String
        var end: String?
        var flow: PeriodFlow?
        var symptoms: [String]
        var notes: String?
    }

    /// The row `period` of `user` is stored as, sealed under their data key (made on their first sensitive write).
    func sealed(_ period: Period, of user: UserID) async throws -> SealedPeriod {
        guard let key = try await vault.dataKey(of: user, creating: true) else { throw SealedFieldsError.noKey }
        return try Self.seal(period, of: user, with: key, vault: vault)
    }

    static func seal(_ period: Period, of user: UserID, with key: HealthVault.DataKey, vault: HealthVault) throws -> SealedPeriod {
        let fields = Fields(start: period.start.description, end: period.end?.description, flow: period.flow, symptoms: period.symptoms, notes: period.notes)
        return SealedPeriod(
            id: period.id, startKey: vault.blindIndex(period.start.description, purpose: "cycle_periods.start", with: key),
            fields: try vault.seal(fields, table: table, id: period.id.rawValue, of: user, with: key)
        )
    }

    /// Every period of `user`, by first day.
    func periods(of user: UserID) async throws -> [Period] {
        let rows = try await database.withConnection { db in try await Self.rows(of: user, on: db) }
        return try await open(rows, of: user)
    }

    /// The sealed rows of every period of `user`, for ``open(_:of:)``.
    static func rows(of user: UserID, on db: any SQLDatabase) async throws -> [any SQLRow] {
        try await selectPeriods(user.rawValue).all(on: db)
    }

    private static let selectPeriods = StoredStatement(#"SELECT "id", "key_id", "sealed" FROM "cycle_periods" WHERE "user_id" = ?"#)

    /// Inserts or replaces the row of `period` of `user`. Only ``PeriodWrite`` calls it: it enters the change into the
    /// feed. Throws a unique violation when another period of theirs starts the same day, and `id_taken` (nothing
    /// written) when the id is another user's period: the statement itself checks the owner.
    static func upsert(_ period: SealedPeriod, of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        let written = try await db.insert(into: "cycle_periods")
            .columns("id", "user_id", "start_key", "key_id", "sealed", "created_at", "updated_at")
            .values(
                SQLBind(period.id.rawValue), SQLBind(user.rawValue), SQLBind(period.startKey), SQLBind(period.fields.keyID),
                SQLBind(period.fields.sealed), SQLBind(now), SQLBind(now)
            )
            .onConflict(with: ["id"]) { conflict in
                ["start_key", "key_id", "sealed", "updated_at"].reduce(conflict) { $0.set(excludedValueOf: $1) }
                    .where(SQLColumn("user_id", table: "cycle_periods"), .equal, SQLColumn("user_id", table: "excluded"))
            }
            .returning("id").first()
        guard written != nil else { throw RecordIDTaken() }
    }

    /// Deletes the row of the period if it is the user's, nothing else (``PeriodsCollection/delete(_:_:on:)`` is the delete
    /// with its effects); whether it was there.
    static func deleteRow(_ id: PeriodID, of user: UserID, on db: any SQLDatabase) async throws -> Bool {
        !(try await db.delete(from: "cycle_periods").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue)
            .returning("id").all()).isEmpty
    }

    /// Whether the period `id` is the user's.
    func exists(_ id: PeriodID, of user: UserID) async throws -> Bool {
        try await database.withConnection { db in
            try await db.select().column("id").from("cycle_periods").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue).first() != nil
        }
    }

    /// Periods of `user` with these ids (for the change feed).
    func periods(_ ids: [PeriodID], of user: UserID, on db: any SQLDatabase) async throws -> [Period] {
        guard !ids.isEmpty else { return [] }
        let rows = try await db.select().columns("id", "key_id", "sealed").from("cycle_periods")
            .where("user_id", .equal, user.rawValue).where("id", .in, ids.map(\.rawValue)).all()
        return try await open(rows, of: user)
    }

    /// Opens rows of `user`, by first day. Rows sealed under a key that is no longer the user's were crypto-shredded
    /// (a deletion that destroyed the key but did not complete): unreadable by design and left out.
    func open(_ rows: [any SQLRow], of user: UserID) async throws -> [Period] {
        guard !rows.isEmpty, let key = try await vault.dataKey(of: user, creating: false) else { return [] }
        var periods: [Period] = []
        periods.reserveCapacity(rows.count)
        for row in rows {
            let id = PeriodID(rawValue: try row.decode(column: "id", as: UUID.self))
            let sealed = SealedFields(keyID: try row.decode(column: "key_id", as: String.self), sealed: try row.decode(column: "sealed", as: Data.self))
            guard sealed.keyID == key.id else { continue }
            let fields = try vault.open(Fields.self, sealed, table: Self.table, id: id.rawValue, of: user, with: key)
            periods.append(Period(
                id: id, start: CalendarDay(fields.start) ?? CalendarDay(daysSince1970: 0), end: fields.end.flatMap(CalendarDay.init),
                flow: fields.flow, symptoms: fields.symptoms, notes: fields.notes
            ))
        }
        return periods.sorted { ($0.start, $0.id.description) < ($1.start, $1.id.description) }
    }
}

/// Logged periods in the account export (opened) and deletion (the rows; the data key that sealed them is destroyed
/// by the health owner, so copies elsewhere are unreadable too).
struct CyclePeriodsOwner: InMemoryAccountDataOwner {
    let store: CycleStore
    let audit: AuditLog
    let section = "cyclePeriods"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let rows = try await CycleStore.rows(of: user, on: db)
        let opened = try await store.open(rows, of: user)
        if !opened.isEmpty {
            try await audit.append(AuditEvent(actor: user, subject: user, action: .export, resource: PeriodsCollection.resource, count: opened.count))
        }
        return try .exportList(opened) { period in
            [
                "startDate": period.start.description,
                "endDate": period.end?.description,
                "flow": period.flow?.rawValue,
                "symptoms": period.symptoms,
                "notes": period.notes,
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "cycle_periods").where("user_id", .equal, user.rawValue).run()
    }
}

extension CycleStore {
    /// The pushing user's periods, read once per push.
    func periods(_ reads: PushReads) async throws -> [Period] {
        let user = reads.user
        return try await reads.once("cycle.periods") { try await self.periods(of: user) }
    }
}

import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// `cycle_periods`: one row per logged period of a user.
struct CreateCyclePeriods: Migration {
    let name = "2026-11-22.cycle.create-periods"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "cycle_periods")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("user_id", type: engine.uuid, .notNull, .references("users", "id", onDelete: .cascade))
            .column("start_date", type: .text, .notNull)  // YYYY-MM-DD in the user's time zone
            .column("end_date", type: .text)
            .column("flow", type: .text)
            .column("symptoms", type: .text, .notNull)  // JSON array
            .column("notes", type: .text)
            .column("created_at", type: engine.instant, .notNull)
            .column("updated_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "cycle_periods_user_start").unique().on("cycle_periods").column("user_id").column("start_date").run()
    }
}

/// SQL for `cycle_periods`, always scoped to one user.
struct CycleStore: Sendable {
    let database: Database

    func periods(of user: UserID) async throws -> [LoggedPeriod] {
        try await database.withConnection { db in try await Self.selectPeriods(user.rawValue).all(on: db).map(Self.period) }
    }

    private static let selectPeriods = StoredStatement(
        #"SELECT "id", "start_date", "end_date", "flow", "symptoms", "notes" FROM "cycle_periods" WHERE "user_id" = ? ORDER BY "start_date""#
    )

    /// Inserts or replaces the row of `period` of `user`. Only ``PeriodWrite`` calls it: it enters the change into the
    /// feed. Throws a unique violation when another period of theirs starts the same day, and `id_taken` (nothing
    /// written) when the id is another user's period: the statement itself checks the owner.
    static func upsert(_ period: LoggedPeriod, of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        let written = try await db.insert(into: "cycle_periods")
            .columns("id", "user_id", "start_date", "end_date", "flow", "symptoms", "notes", "created_at", "updated_at")
            .values(
                SQLBind(period.id.rawValue), SQLBind(user.rawValue), SQLBind(period.start.description), SQLBind(period.end?.description),
                SQLBind(period.flow), SQLBind(try jsonText(period.symptoms)), SQLBind(period.notes), SQLBind(now), SQLBind(now)
            )
            .onConflict(with: ["id"]) { conflict in
                ["start_date", "end_date", "flow", "symptoms", "notes", "updated_at"].reduce(conflict) { $0.set(excludedValueOf: $1) }
                    .where(SQLColumn("user_id", table: "cycle_periods"), .equal, SQLColumn("user_id", table: "excluded"))
            }
            .returning("id").first()
        guard written != nil else { throw SyncController.idTaken }
    }

    /// Deletes the row of the period if it is the user's, nothing else (``PeriodsCollection/delete(_:_:on:)`` is the delete
    /// with its effects); whether it was there.
    static func deleteRow(_ id: PeriodID, of user: UserID, on db: any SQLDatabase) async throws -> Bool {
        !(try await db.delete(from: "cycle_periods").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue)
            .returning("id").all()).isEmpty
    }

    /// The period `id` if it belongs to `user`.
    func period(_ id: PeriodID, of user: UserID) async throws -> LoggedPeriod? {
        try await database.withConnection { db in
            try await db.select().columns("id", "start_date", "end_date", "flow", "symptoms", "notes").from("cycle_periods")
                .where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue).first().map(Self.period)
        }
    }

    /// Periods of `user` with these ids (for the change feed).
    static func periods(_ ids: [PeriodID], of user: UserID, on db: any SQLDatabase) async throws -> [LoggedPeriod] {
        guard !ids.isEmpty else { return [] }
        return try await db.select().columns("id", "start_date", "end_date", "flow", "symptoms", "notes").from("cycle_periods")
            .where("user_id", .equal, user.rawValue).where("id", .in, ids.map(\.rawValue)).all().map(period)
    }

    private static func period(_ row: any SQLRow) throws -> LoggedPeriod {
        LoggedPeriod(
            id: PeriodID(rawValue: try row.decode(column: "id", as: UUID.self)),
            start: CalendarDay(try row.decode(column: "start_date", as: String.self)) ?? CalendarDay(daysSince1970: 0),
            end: try row.decode(column: "end_date", as: String?.self).flatMap(CalendarDay.init),
            flow: try row.decode(column: "flow", as: String?.self),
            symptoms: try row.decodeJSON(column: "symptoms", as: [String].self),
            notes: try row.decode(column: "notes", as: String?.self)
        )
    }
}

/// Logged periods in the account export and deletion.
struct CyclePeriodsOwner: AccountDataOwner {
    let section = "cyclePeriods"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let rows = try await db.select().columns("start_date", "end_date", "flow", "symptoms", "notes").from("cycle_periods")
            .where("user_id", .equal, user.rawValue).orderBy("start_date").all()
        let periods: [(any Sendable)?] = try rows.map { row in
            [
                "startDate": try row.decode(column: "start_date", as: String.self),
                "endDate": try row.decode(column: "end_date", as: String?.self),
                "flow": try row.decode(column: "flow", as: String?.self),
                "symptoms": try row.decodeJSON(column: "symptoms", as: [String].self),
                "notes": try row.decode(column: "notes", as: String?.self),
            ] as [String: (any Sendable)?]
        }
        return try OpenAPIValueContainer(unvalidatedValue: periods)
    }

    func delete(_ user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "cycle_periods").where("user_id", .equal, user.rawValue).run()
    }
}

extension CycleStore {
    /// The pushing user's periods, read once per push.
    func periods(_ reads: PushReads) async throws -> [LoggedPeriod] {
        let user = reads.user
        return try await reads.once("cycle.periods") { try await self.periods(of: user) }
    }
}

import FitBaseCore
import Foundation
import OpenAPIRuntime
import SQLKit

/// `workout_logs`: completed workouts, with the local day and cycle position fixed when they were logged.
struct CreateWorkoutLogs: Migration {
    let name = "2026-11-22.history.create-workout-logs"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "workout_logs")
            .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
            .column("user_id", type: engine.uuid, .notNull, .references("users", "id", onDelete: .cascade))
            .column("workout_id", type: engine.uuid, .notNull)  // no foreign key: history outlives catalog edits
            .column("workout_type", type: .text, .notNull)
            .column("workout_title", type: .text, .notNull)
            .column("completed_at", type: engine.instant, .notNull)
            .column("local_date", type: .text, .notNull)  // YYYY-MM-DD in the user's time zone when logged
            .column("duration_minutes", type: .int, .notNull)
            .column("rating", type: .int)
            .column("energy_before", type: .int)
            .column("energy_after", type: .int)
            .column("notes", type: .text)
            .column("cycle_phase", type: .text)
            .column("cycle_day", type: .int)
            .column("created_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "workout_logs_user_completed").on("workout_logs").column("user_id").column("completed_at").run()
    }
}

/// SQL for `workout_logs`, always scoped to one user.
struct HistoryStore: Sendable {
    let database: Database

    /// Writes the row of `log` of `user`, replacing a log of theirs with its id. Only ``WorkoutLogWrite`` calls it: it
    /// adds the feed entry and the scores. `now` is the creation time of a new log. Another user's id is `id_taken`,
    /// with nothing written (the statement itself checks the owner, so concurrent first writes cannot race).
    static func upsert(_ log: WorkoutLog, of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        let written = try await upsertLog(
            log.id.rawValue, user.rawValue, log.workout.rawValue, log.workoutType.rawValue, log.workoutTitle, log.completedAt,
            log.localDate.description, log.durationMinutes, log.rating, log.energyBefore, log.energyAfter, log.notes,
            log.cyclePhase?.rawValue, log.cycleDay, now
        ).first(on: db)
        guard written != nil else { throw SyncController.idTaken }
    }

    private static let upsertLog = StoredStatement(
        #"INSERT INTO "workout_logs" ("id", "user_id", "workout_id", "workout_type", "workout_title", "completed_at", "local_date", "#
            + #""duration_minutes", "rating", "energy_before", "energy_after", "notes", "cycle_phase", "cycle_day", "created_at") "#
            + #"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT ("id") DO UPDATE SET "#
            + [
                "workout_id", "workout_type", "workout_title", "completed_at", "local_date", "duration_minutes", "rating",
                "energy_before", "energy_after", "notes", "cycle_phase", "cycle_day",
            ].map { #""\#($0)" = EXCLUDED."\#($0)""# }.joined(separator: ", ")
            + #" WHERE "workout_logs"."user_id" = EXCLUDED."user_id" RETURNING "id""#
    )

    /// Logs of `user` with these ids (for the change feed).
    static func logs(_ ids: [WorkoutLogID], of user: UserID, on db: any SQLDatabase) async throws -> [WorkoutLog] {
        guard !ids.isEmpty else { return [] }
        return try await select(on: db).where("user_id", .equal, user.rawValue).where("id", .in, ids.map(\.rawValue)).all().map(log)
    }

    /// Deletes the row of the log if it is the user's, nothing else (``WorkoutLogsCollection/delete(_:_:on:)`` is the delete
    /// with its effects); whether it was there.
    static func deleteRow(_ id: WorkoutLogID, of user: UserID, on db: any SQLDatabase) async throws -> Bool {
        !(try await db.delete(from: "workout_logs").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue)
            .returning("id").all()).isEmpty
    }

    /// Logs of `user` between the local dates `from` and `to` (inclusive), newest first, one page at `offset`.
    func logs(of user: UserID, from: CalendarDay?, to: CalendarDay?, offset: Int, limit: Int) async throws -> [WorkoutLog] {
        try await database.withConnection { db in
            var query = Self.select(on: db).where("user_id", .equal, user.rawValue)
            if let from { query = query.where("local_date", .greaterThanOrEqual, from.description) }
            if let to { query = query.where("local_date", .lessThanOrEqual, to.description) }
            return try await query.orderBy("completed_at", .descending).orderBy("id", .descending).offset(offset).limit(limit).all().map(Self.log)
        }
    }

    /// Every log of `user` (for statistics).
    func allLogs(of user: UserID) async throws -> [WorkoutLog] {
        try await database.withConnection { db in
            try await Self.select(on: db).where("user_id", .equal, user.rawValue).orderBy("completed_at").all().map(Self.log)
        }
    }

    private static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns(
            "id", "workout_id", "workout_type", "workout_title", "completed_at", "local_date", "duration_minutes", "rating",
            "energy_before", "energy_after", "notes", "cycle_phase", "cycle_day"
        ).from("workout_logs")
    }

    private static func log(_ row: any SQLRow) throws -> WorkoutLog {
        WorkoutLog(
            id: WorkoutLogID(rawValue: try row.decode(column: "id", as: UUID.self)),
            workout: WorkoutID(rawValue: try row.decode(column: "workout_id", as: UUID.self)),
            workoutType: WorkoutType(rawValue: try row.decode(column: "workout_type", as: String.self)) ?? .strength,
            workoutTitle: try row.decode(column: "workout_title", as: String.self),
            completedAt: try row.decode(column: "completed_at", as: Date.self),
            localDate: CalendarDay(try row.decode(column: "local_date", as: String.self)) ?? CalendarDay(daysSince1970: 0),
            durationMinutes: try row.decode(column: "duration_minutes", as: Int.self),
            rating: try row.decode(column: "rating", as: Int?.self),
            energyBefore: try row.decode(column: "energy_before", as: Int?.self),
            energyAfter: try row.decode(column: "energy_after", as: Int?.self),
            notes: try row.decode(column: "notes", as: String?.self),
            cyclePhase: try row.decode(column: "cycle_phase", as: String?.self).flatMap(CyclePhase.init(rawValue:)),
            cycleDay: try row.decode(column: "cycle_day", as: Int?.self)
        )
    }
}

/// Workout history in the account export and deletion.
struct WorkoutLogsOwner: AccountDataOwner {
    let section = "workoutHistory"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        let rows = try await db.select().columns("workout_id", "workout_title", "completed_at", "duration_minutes", "rating", "energy_before", "energy_after", "notes")
            .from("workout_logs").where("user_id", .equal, user.rawValue).orderBy("completed_at").all()
        let logs: [(any Sendable)?] = try rows.map { row in
            [
                "workoutId": WorkoutID(rawValue: try row.decode(column: "workout_id", as: UUID.self)).description,
                "workoutTitle": try row.decode(column: "workout_title", as: String.self),
                "completedAt": try row.decode(column: "completed_at", as: Date.self).formatted(.iso8601),
                "durationMinutes": try row.decode(column: "duration_minutes", as: Int.self),
                "rating": try row.decode(column: "rating", as: Int?.self),
                "energyBefore": try row.decode(column: "energy_before", as: Int?.self),
                "energyAfter": try row.decode(column: "energy_after", as: Int?.self),
                "notes": try row.decode(column: "notes", as: String?.self),
            ] as [String: (any Sendable)?]
        }
        return try OpenAPIValueContainer(unvalidatedValue: logs)
    }

    func delete(_ user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "workout_logs").where("user_id", .equal, user.rawValue).run()
    }
}

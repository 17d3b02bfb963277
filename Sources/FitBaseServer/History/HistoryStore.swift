import FitBaseCore
import Foundation
import SQLKit

/// SQL for `workout_logs`, always scoped to one user; seals the private fields it writes and opens those it reads.
struct HistoryStore: Sendable {
    let database: Database
    let vault: HealthVault

    static let table = "workout_logs"

    /// `log`'s private fields sealed under its owner's data key (made on their first sensitive write). A log with no
    /// private field has nothing to seal: it is stored with an empty ciphertext, which reads back as no fields, so
    /// neither its write nor its every read pays for AES-GCM (sealing and opening an empty object were 3 % of a log's
    /// CPU and a tenth of a page's). An empty ciphertext says no more than a sealed empty object's length did.
    func sealed(_ log: WorkoutLog, of user: UserID) async throws -> SealedFields {
        guard let key = try await vault.dataKey(of: user, creating: true) else { throw SealedFieldsError.noKey }
        let fields = PrivateFields(log)
        guard !fields.isEmpty else { return SealedFields(keyID: key.id, sealed: Data()) }
        return try vault.seal(bytes: fields.json, table: Self.table, id: log.id.rawValue, of: user, with: key)
    }

    /// Writes the row of `log` of `user` (its private fields as `sealed`), replacing a log of theirs with its id. Only
    /// ``WorkoutLogWrite`` calls it: it adds the feed entry and the scores. `now` is the creation time of a new log.
    /// Another user's id is `id_taken`, with nothing written (the statement itself checks the owner, so concurrent
    /// first writes cannot race). In a push the row is written with the push's next statement (``OwnedRowUpsert``).
    static func upsert(_ log: WorkoutLog, sealed: SealedFields, of user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await upsertLog.upsertSoon(
            log.id.rawValue,
            [
                log.id.rawValue, user.rawValue, log.workout.rawValue, log.workoutType.rawValue, log.workoutTitle, log.completedAt,
                log.localDate.description, log.durationMinutes, log.rating, sealed.keyID, sealed.sealed, now,
            ],
            on: db
        )
    }

    private static let upsertLog = OwnedRowUpsert(
        table: table,
        columns: [
            "id", "user_id", "workout_id", "workout_type", "workout_title", "completed_at", "local_date", "duration_minutes", "rating", "key_id",
            "sealed", "created_at",
        ],
        updating: ["workout_id", "workout_type", "workout_title", "completed_at", "local_date", "duration_minutes", "rating", "key_id", "sealed"]
    )

    /// Logs of `user` with these ids (for the change feed).
    func logs(_ ids: [WorkoutLogID], of user: UserID, on db: any SQLDatabase) async throws -> [WorkoutLog] {
        guard !ids.isEmpty else { return [] }
        return try await open(try await Self.select(on: db).where("user_id", .equal, user.rawValue).where("id", .in, ids.map(\.rawValue)).all(), of: user)
    }

    /// Deletes the row of the log if it is the user's, nothing else (``WorkoutLogsCollection/delete(_:_:on:)`` is the delete
    /// with its effects); whether it was there.
    static func deleteRow(_ id: WorkoutLogID, of user: UserID, on db: any SQLDatabase) async throws -> Bool {
        !(try await db.delete(from: "workout_logs").where("id", .equal, id.rawValue).where("user_id", .equal, user.rawValue)
            .returning("id").all()).isEmpty
    }

    /// Logs of `user` between the local dates `from` and `to` (inclusive), newest first, one page at `offset`.
    func logs(of user: UserID, from: CalendarDay?, to: CalendarDay?, offset: Int, limit: Int) async throws -> [WorkoutLog] {
        var binds: [any Encodable & Sendable] = [user.rawValue]
        if let from { binds.append(from.description) }
        if let to { binds.append(to.description) }
        binds += [limit, offset]
        let statement = Self.pages[(from == nil ? 0 : 1) + (to == nil ? 0 : 2)].with(binds)
        let rows = try await database.withConnection { db in try await statement.all(on: db) }
        return try await open(rows, of: user)
    }

    /// A page of one user's logs, newest first along `workout_logs_user_newest`, written once as SQL (SQLKit built
    /// it on every request: 4 % of the CPU of listing twenty logs): without dates, from a day, to a day, and both.
    private static let pages: [StoredStatement] = [
        "", #" AND "local_date" >= ?"#, #" AND "local_date" <= ?"#, #" AND "local_date" >= ? AND "local_date" <= ?"#,
    ].map { dates in
        StoredStatement(
            "SELECT " + columns.map { "\"\($0)\"" }.joined(separator: ", ") + #" FROM "workout_logs" WHERE "user_id" = ?"# + dates
                + #" ORDER BY "completed_at" DESC, "id" DESC LIMIT ? OFFSET ?"#
        )
    }

    /// Every log of `user` (for statistics).
    func allLogs(of user: UserID) async throws -> [WorkoutLog] {
        let rows = try await database.withConnection { db in
            try await Self.select(on: db).where("user_id", .equal, user.rawValue).orderBy("completed_at").all()
        }
        return try await open(rows, of: user)
    }

    /// The columns a log is read from (``open(_:of:)``).
    private static let columns = [
        "id", "workout_id", "workout_type", "workout_title", "completed_at", "local_date", "duration_minutes", "rating", "key_id", "sealed",
    ]

    static func select(on db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns(columns).from("workout_logs")
    }

    /// Rows of ``select(on:)`` of `user`, in order, with their private fields opened. A log whose fields were sealed
    /// under a key that is no longer the user's (crypto-shredded) keeps its clear fields only.
    func open(_ rows: [any SQLRow], of user: UserID) async throws -> [WorkoutLog] {
        guard !rows.isEmpty else { return [] }
        let key = try await vault.dataKey(of: user, creating: false)
        // A SQLite row is read as its own type, so every column's decoding is specialized (through `any SQLRow` each
        // one asks the runtime for its type's metadata): a tenth of the CPU of listing twenty logs.
        return try rows.map { row in
            if let row = row as? SQLiteDirectRow { return try log(row, of: user, key: key) }
            return try log(row, of: user, key: key)
        }
    }

    private func log(_ row: some SQLRow, of user: UserID, key: HealthVault.DataKey?) throws -> WorkoutLog {
        let id = WorkoutLogID(rawValue: try row.decode(column: "id", as: UUID.self))
        var fields = PrivateFields(energyBefore: nil, energyAfter: nil, notes: nil, cyclePhase: nil, cycleDay: nil)
        if let key, let keyID = try row.decode(column: "key_id", as: String?.self), keyID == key.id,
            let sealed = try row.decode(column: "sealed", as: Data?.self), !sealed.isEmpty
        {
            let plain = try vault.open(bytes: SealedFields(keyID: keyID, sealed: sealed), table: Self.table, id: id.rawValue, of: user, with: key)
            fields = try PrivateFields.read(plain)
        }
        return WorkoutLog(
            id: id,
            workout: WorkoutID(rawValue: try row.decode(column: "workout_id", as: UUID.self)),
            workoutType: WorkoutType(rawValue: try row.decode(column: "workout_type", as: String.self)) ?? .strength,
            workoutTitle: try row.decode(column: "workout_title", as: String.self),
            completedAt: try row.decode(column: "completed_at", as: Date.self),
            localDate: CalendarDay(try row.decode(column: "local_date", as: String.self)) ?? CalendarDay(daysSince1970: 0),
            durationMinutes: try row.decode(column: "duration_minutes", as: Int.self),
            rating: try row.decode(column: "rating", as: Int?.self),
            energyBefore: fields.energyBefore, energyAfter: fields.energyAfter, notes: fields.notes,
            cyclePhase: fields.cyclePhase.flatMap(CyclePhase.init(rawValue:)), cycleDay: fields.cycleDay
        )
    }
}

import FitBaseCore
import Foundation
import Logging
import SQLKit

/// Seals the cycle data earlier versions stored in clear, as the server starts (after the migrations, which cannot
/// reach the master key): the periods of `cycle_periods_unsealed` move into the sealed `cycle_periods` (the emptied
/// table is dropped) in one transaction, and the private fields of workout logs written before
/// ``SealWorkoutLogFields`` move into `sealed`, their clear columns set to NULL, in batches of a few hundred rows,
/// each in its own transaction, so an interrupted run resumes where it stopped; so do the profiles' last period dates
/// (`user_profiles.last_period_start_date`, moved into ``SealedProfileFields``). Instances starting together on one
/// PostgreSQL database can run it at once (periods under the migrations' lock; a log is updated only while it is
/// still unsealed). On SQLite `secure_delete` overwrites what is removed.
struct CycleDataSealing: Sendable {
    let database: Database
    let vault: HealthVault

    static let batch = 500

    /// Seals whatever is still in clear; returns how many periods, logs and profiles it sealed.
    @discardableResult
    func run(logger: Logger) async throws -> (periods: Int, logs: Int, profiles: Int) {
        let periods = try await sealPeriods()
        let logs = try await sealLogs()
        let profiles = try await sealProfiles()
        if periods + logs + profiles > 0 {
            logger.notice(
                "sealed cycle data stored in clear by an earlier version",
                metadata: ["periods": "\(periods)", "workoutLogs": "\(logs)", "profiles": "\(profiles)"]
            )
        }
        return (periods, logs, profiles)
    }

    /// Moves every clear period into the sealed table and drops the clear one, in one transaction under the
    /// migrations' lock (instances starting together take turns; the first moves them, the others find no table).
    private func sealPeriods() async throws -> Int {
        guard try await database.tableExists("cycle_periods_unsealed") else { return 0 }
        // The owners' data keys first, outside the transaction: the key store may share this database's single writer.
        let owners: [UUID]
        do {
            owners = try await database.withConnection { db in
                try await db.select().distinct().column("user_id").from("cycle_periods_unsealed").all().map { try $0.decode(column: "user_id", as: UUID.self) }
            }
        } catch {
            // Moved and dropped by another instance since the check.
            if try await !database.tableExists("cycle_periods_unsealed") { return 0 }
            throw error
        }
        var keys: [UUID: HealthVault.DataKey] = [:]
        for owner in owners {
            guard let key = try await vault.dataKey(of: UserID(rawValue: owner), creating: true) else { throw SealedFieldsError.noKey }
            keys[owner] = key
        }
        let engine = database.engine
        let vault = self.vault
        let ownerKeys = keys
        return try await database.transaction { db in
            try await MigrationRunner.lock(db, engine: engine)
            guard try await Database.tableExists("cycle_periods_unsealed", on: db, engine: engine) else { return 0 }
            let rows = try await db.select().columns("id", "user_id", "start_date", "end_date", "flow", "symptoms", "notes", "created_at", "updated_at")
                .from("cycle_periods_unsealed").all()
            for row in rows {
                let owner = try row.decode(column: "user_id", as: UUID.self)
                let user = UserID(rawValue: owner)
                let period = Period(
                    id: PeriodID(rawValue: try row.decode(column: "id", as: UUID.self)),
                    start: CalendarDay(try row.decode(column: "start_date", as: String.self)) ?? CalendarDay(daysSince1970: 0),
                    end: try row.decode(column: "end_date", as: String?.self).flatMap(CalendarDay.init),
                    flow: try row.decode(column: "flow", as: String?.self).map { flow in
                        // Earlier versions took only the contract's values: any other is a damaged row, not a period to guess at.
                        guard let known = PeriodFlow(rawValue: flow) else { throw SealedFieldsError.unknownFlow(flow) }
                        return known
                    },
                    symptoms: try row.decodeJSON(column: "symptoms", as: [String].self),
                    notes: try row.decode(column: "notes", as: String?.self)
                )
                // An owner who appeared since the keys were made (none can: nothing writes the clear table) would fail here.
                guard let key = ownerKeys[owner] else { throw SealedFieldsError.noKey }
                let sealed = try CycleStore.seal(period, of: user, with: key, vault: vault)
                try await db.insert(into: "cycle_periods")
                    .columns("id", "user_id", "start_key", "key_id", "sealed", "created_at", "updated_at")
                    .values(
                        SQLBind(sealed.id.rawValue), SQLBind(owner), SQLBind(sealed.startKey), SQLBind(sealed.fields.keyID), SQLBind(sealed.fields.sealed),
                        SQLBind(try row.decode(column: "created_at", as: Date.self)), SQLBind(try row.decode(column: "updated_at", as: Date.self))
                    )
                    .ignoringConflicts(with: ["id"])
                    .run()
            }
            try await db.delete(from: "cycle_periods_unsealed").run()
            try await db.drop(table: "cycle_periods_unsealed").run()
            return rows.count
        }
    }

    private func sealLogs() async throws -> Int {
        try await sealInBatches(
            select: { db in
                try await db.select().columns("id", "user_id", "energy_before", "energy_after", "notes", "cycle_phase", "cycle_day")
                    .from("workout_logs").where(SQLIdentifier("sealed"), .is, SQLLiteral.null).limit(Self.batch).all()
            },
            seal: { row in
                let user = UserID(rawValue: try row.decode(column: "user_id", as: UUID.self))
                let id = try row.decode(column: "id", as: UUID.self)
                let fields = HistoryStore.PrivateFields(
                    energyBefore: try row.decode(column: "energy_before", as: Int?.self), energyAfter: try row.decode(column: "energy_after", as: Int?.self),
                    notes: try row.decode(column: "notes", as: String?.self), cyclePhase: try row.decode(column: "cycle_phase", as: String?.self),
                    cycleDay: try row.decode(column: "cycle_day", as: Int?.self)
                )
                guard let key = try await vault.dataKey(of: user, creating: true) else { throw SealedFieldsError.noKey }
                return (id, try vault.seal(bytes: fields.json, table: HistoryStore.table, id: id, of: user, with: key))
            },
            write: { update, db in
                try await db.update("workout_logs")
                    .set("key_id", to: update.fields.keyID).set("sealed", to: update.fields.sealed)
                    .set("energy_before", to: SQLLiteral.null).set("energy_after", to: SQLLiteral.null).set("notes", to: SQLLiteral.null)
                    .set("cycle_phase", to: SQLLiteral.null).set("cycle_day", to: SQLLiteral.null)
                    .where("id", .equal, update.id).where(SQLIdentifier("sealed"), .is, SQLLiteral.null)
                    .run()
            }
        )
    }

    private func sealProfiles() async throws -> Int {
        try await sealInBatches(
            select: { db in
                try await db.select().columns("user_id", "last_period_start_date").from(ProfileStore.table)
                    .where(SQLIdentifier("last_period_start_date"), .isNot, SQLLiteral.null).limit(Self.batch).all()
            },
            seal: { row in
                let user = UserID(rawValue: try row.decode(column: "user_id", as: UUID.self))
                let fields = SealedProfileFields(lastPeriodStartDate: try row.decode(column: "last_period_start_date", as: String.self))
                guard let key = try await vault.dataKey(of: user, creating: true) else { throw SealedFieldsError.noKey }
                return (user.rawValue, try vault.seal(fields, table: ProfileStore.table, id: user.rawValue, of: user, with: key))
            },
            write: { update, db in
                try await db.update(ProfileStore.table)
                    .set("cycle_key_id", to: update.fields.keyID).set("cycle_sealed", to: update.fields.sealed)
                    .set("last_period_start_date", to: SQLLiteral.null)
                    .where("user_id", .equal, update.id).where(SQLIdentifier("last_period_start_date"), .isNot, SQLLiteral.null)
                    .run()
            }
        )
    }

    /// Seals rows still in clear, a batch at a time until none is left: `select` reads up to ``batch`` of them, `seal`
    /// makes a row's sealed fields (the data keys are made here, outside any transaction: the key store may share this
    /// database's single writer), and `write` stores them and empties the clear columns — one transaction per batch, each
    /// write applying only while its row is still in clear, so an interrupted run or a second instance resumes safely.
    private func sealInBatches(
        select: @escaping @Sendable (any SQLDatabase) async throws -> [any SQLRow],
        seal: (any SQLRow) async throws -> (id: UUID, fields: SealedFields),
        write: @escaping @Sendable ((id: UUID, fields: SealedFields), any SQLDatabase) async throws -> Void
    ) async throws -> Int {
        var sealed = 0
        while true {
            let rows = try await database.withConnection { db in try await select(db) }
            if rows.isEmpty { break }
            var updates: [(id: UUID, fields: SealedFields)] = []
            for row in rows { updates.append(try await seal(row)) }
            let batch = updates
            try await database.transaction { db in
                for update in batch { try await write(update, db) }
            }
            sealed += batch.count
        }
        return sealed
    }
}

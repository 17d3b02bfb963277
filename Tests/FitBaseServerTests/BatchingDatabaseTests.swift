import FitBaseCore
import FitBaseTestSupport
import Foundation
import SQLKit
import Testing

@testable import FitBaseServer

/// Row upserts a push batches (``BatchingDatabase``, ``OwnedRowUpsert``): the database sees the same writes in the same
/// order, and a row that is another user's fails the batch instead of vanishing.
@Suite struct BatchingDatabaseTests {
    static let upsert = OwnedRowUpsert(table: "batched_rows", columns: ["id", "user_id", "n"], updating: ["n"])

    static func withTable(_ engine: DatabaseEngine, _ body: @escaping @Sendable (Database) async throws -> Void) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            try await database.transaction { db in
                try await db.create(table: "batched_rows")
                    .column("id", type: engine.uuid, .primaryKey(autoIncrement: false))
                    .column("user_id", type: engine.uuid, .notNull)
                    .column("n", type: .int, .notNull)
                    .run()
            }
            try await body(database)
            try await database.shutdown()
        }
    }

    static func numbers(in db: any SQLDatabase, of user: UUID) async throws -> [Int] {
        try await db.select().column("n").from("batched_rows").where("user_id", .equal, user).orderBy("n").all().map { try $0.decode(column: "n", as: Int.self) }
    }

    /// Rows wait until another statement runs; that statement sees them, and a row written twice keeps its last value.
    @Test(arguments: TestEngines.all)
    func waitingRowsAreWrittenBeforeAnyOtherStatement(engine: DatabaseEngine) async throws {
        try await Self.withTable(engine) { database in
            let user = UUID()
            let ids = (0..<600).map { _ in UUID() }
            try await database.transaction { connection in
                let db = BatchingDatabase(connection)
                for (n, id) in ids.enumerated() { try await Self.upsert.upsertSoon(id, [id, user, n], on: db) }
                // Nothing reached the table yet: the plain connection does not flush.
                #expect(try await Self.numbers(in: connection, of: user).isEmpty)
                // A statement through the batching database runs after every waiting row is written (in 3 statements).
                #expect(try await Self.numbers(in: db, of: user) == Array(0..<600))
                // The same id twice: the first value is written before the second is taken.
                try await Self.upsert.upsertSoon(ids[0], [ids[0], user, 1000], on: db)
                try await Self.upsert.upsertSoon(ids[0], [ids[0], user, 2000], on: db)
                try await db.flush()
            }
            let stored = try await database.withConnection { db in try await Self.numbers(in: db, of: user) }
            #expect(stored.count == 600 && stored.last == 2000 && !stored.contains(0) && !stored.contains(1000))
        }
    }

    /// An id that is another user's row is not overwritten: the batch fails (the caller redoes its work row by row),
    /// where a row written at once is `id_taken`.
    @Test(arguments: TestEngines.all)
    func anotherUsersRowFailsTheBatchAndIsNotOverwritten(engine: DatabaseEngine) async throws {
        try await Self.withTable(engine) { database in
            let owner = UUID()
            let attacker = UUID()
            let taken = UUID()
            try await database.transaction { db in _ = try await Self.upsert.upsert([taken, owner, 7], on: db) }
            await #expect(throws: BatchedRowRefused.self) {
                try await database.transaction { connection in
                    let db = BatchingDatabase(connection)
                    let fresh = UUID()
                    try await Self.upsert.upsertSoon(fresh, [fresh, attacker, 1], on: db)
                    try await Self.upsert.upsertSoon(taken, [taken, attacker, 666], on: db)
                    try await db.flush()
                }
            }
            await #expect(throws: RecordIDTaken.self) {
                try await database.transaction { db in _ = try await Self.upsert.upsert([taken, attacker, 666], on: db) }
            }
            let (owners, attackers) = try await database.withConnection { db in
                (try await Self.numbers(in: db, of: owner), try await Self.numbers(in: db, of: attacker))
            }
            #expect(owners == [7])
            #expect(attackers.isEmpty)  // the failed batch left nothing
        }
    }
}

/// PostgreSQL rows decoded by ``PostgresDirectRow``: each column type it handles, as a value and as an optional (null or
/// not), and a type it leaves to PostgresKit (`numeric` read as a `Double`).
@Suite struct PostgresDirectRowTests {
    @Test(arguments: TestEngines.all)
    func columnsDecodeAsPostgresKitDecodesThem(engine: DatabaseEngine) async throws {
        guard engine == .postgres else { return }
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let id = UUID()
            let at = Date(timeIntervalSince1970: 1_795_000_000.25)
            let row = try #require(
                try await database.withConnection { db in
                    try await db.raw(
                        """
                        SELECT \(bind: "text") AS s, NULL::text AS ns, 42::int4 AS i, 7::int8 AS l, NULL::int8 AS ni, 4.5::float8 AS d,
                        true AS b, \(bind: id) AS u, \(bind: at) AS t, '\\x0102'::bytea AS bytes, 1.25::numeric AS n
                        """
                    ).first()
                }
            )
            #expect(row is PostgresDirectRow)
            #expect(try row.decode(column: "s", as: String.self) == "text")
            #expect(try row.decode(column: "s", as: String?.self) == "text")
            #expect(try row.decode(column: "ns", as: String?.self) == nil)
            #expect(throws: (any Error).self) { try row.decode(column: "ns", as: String.self) }
            #expect(try row.decode(column: "i", as: Int.self) == 42)
            #expect(try row.decode(column: "l", as: Int?.self) == 7)
            #expect(try row.decode(column: "ni", as: Int?.self) == nil)
            #expect(try row.decode(column: "d", as: Double.self) == 4.5)
            #expect(try row.decode(column: "b", as: Bool.self))
            #expect(try row.decode(column: "u", as: UUID.self) == id)
            #expect(try row.decode(column: "t", as: Date.self) == at)
            #expect(try row.decode(column: "bytes", as: Data.self) == Data([1, 2]))
            #expect(try row.decode(column: "n", as: Double.self) == 1.25)  // numeric: PostgresKit's own conversion
            #expect(throws: (any Error).self) { try row.decode(column: "missing", as: Int.self) }
            try await database.shutdown()
        }
    }
}

/// Audit entries appended together (``AuditLog/append(all:now:on:engine:)``): each user's run moves the head once and is
/// chained exactly as entries appended one by one, and the next lone entry follows it.
@Suite struct AuditRunTests {
    @Test(arguments: TestEngines.all)
    func runsOfOneUsersEntriesChainAsSingleAppendsDo(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
            let audit = AuditLog(database: database, clock: .system)
            let (first, second) = (UserID(), UserID())
            let events = [first, second, first, first, second].enumerated().map { index, user in
                AuditEvent(actor: user, subject: user, action: .read, resource: .healthSamples, count: index)
            }
            try await database.transaction { db in try await AuditLog.append(all: events, now: .storageNow, on: db, engine: engine) }
            try await audit.append(AuditEvent(actor: first, subject: first, action: .read, resource: .healthSamples, count: 9))
            let firsts = try await audit.entries(about: first, offset: 0, limit: 10)
            #expect(firsts.map(\.seq) == [4, 3, 2, 1])
            #expect(firsts.map(\.count) == [9, 3, 2, 0])  // each user's entries in the order they came
            #expect(try await audit.entries(about: second, offset: 0, limit: 10).map(\.seq) == [2, 1])
            let verdict = try await audit.verify()
            #expect(verdict.firstBreak == nil && verdict.entries == 6 && verdict.chains == 2)
            try await database.shutdown()
        }
    }
}

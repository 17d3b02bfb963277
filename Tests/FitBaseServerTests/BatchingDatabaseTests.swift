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

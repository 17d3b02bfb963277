import FitBaseTestSupport
import Foundation
import SQLKit
import Testing

@testable import FitBaseServer

/// The storage layer on every engine: transactions, migrations, connection settings.
@Suite struct StorageTests {
    @Test(arguments: TestEngines.all)
    func transactionCommitsWhenTheBodyReturns(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            try await createNotes(database)
            try await database.transaction { db in
                try await insertNote(db, "a")
                try await insertNote(db, "b")
            }
            #expect(try await noteCount(database) == 2)
        }
    }

    @Test(arguments: TestEngines.all)
    func transactionRollsBackEverythingWhenTheBodyThrows(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            try await createNotes(database)
            await #expect(throws: Boom.self) {
                try await database.transaction { db in
                    try await insertNote(db, "a")
                    throw Boom()
                }
            }
            #expect(try await noteCount(database) == 0)
            // The connection went back to the pool usable, not stuck inside the failed transaction.
            try await database.transaction { db in try await insertNote(db, "c") }
            #expect(try await noteCount(database) == 1)
        }
    }

    @Test(arguments: TestEngines.all)
    func failedStatementRollsBackTheWholeTransaction(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            try await createNotes(database)
            await #expect(throws: (any Error).self) {
                try await database.transaction { db in
                    try await insertNote(db, "unique")
                    try await insertNote(db, "unique")  // primary-key violation
                }
            }
            #expect(try await noteCount(database) == 0)
        }
    }

    @Test(arguments: TestEngines.all)
    func concurrentTransactionsAllCommit(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            try await createNotes(database)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        try await database.transaction { db in
                            try await insertNote(db, "note-\(index)")
                            try await insertNote(db, "note-\(index)-again")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await noteCount(database) == 80)
        }
    }

    @Test(arguments: TestEngines.all)
    func migrationsAppliedTwiceAreANoOp(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            let runner = MigrationRunner(database: database, migrations: [CreateWidgets(), SeedWidget()], logger: TestDatabase.logger)
            #expect(try await runner.run() == ["test.create-widgets", "test.seed-widget"])
            #expect(try await runner.run() == [])
            let applied = try await runner.appliedNames()
            #expect(applied == ["test.create-widgets", "test.seed-widget"])
            let rows = try await database.withConnection { try await $0.select().column("name").from("widgets").all() }
            #expect(rows.count == 1)
        }
    }

    @Test(arguments: TestEngines.all)
    func concurrentRunnersApplyEachMigrationOnce(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            let runner = MigrationRunner(database: database, migrations: [CreateWidgets(), SeedWidget()], logger: TestDatabase.logger)
            let results = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<4 { group.addTask { try await runner.run() } }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(results.sorted() == ["test.create-widgets", "test.seed-widget"])
        }
    }

    @Test(arguments: TestEngines.all)
    func failingMigrationLeavesNoTraceAndStopsTheRun(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            let runner = MigrationRunner(
                database: database, migrations: [CreateWidgets(), HalfDoneThenFails(), SeedWidget()], logger: TestDatabase.logger
            )
            await #expect(throws: Boom.self) { try await runner.run() }
            let applied = try await runner.appliedNames()
            #expect(applied == ["test.create-widgets"])
            // The half-done table of the failed migration was rolled back with it.
            await #expect(throws: (any Error).self) {
                try await database.withConnection { try await $0.select().column("*").from("gadgets").all() }
            }
        }
    }

    @Test func duplicateMigrationNamesAreRefused() async throws {
        try await withDatabase(.sqlite) { database in
            let runner = MigrationRunner(database: database, migrations: [CreateWidgets(), CreateWidgets()], logger: TestDatabase.logger)
            await #expect(throws: MigrationError.self) { try await runner.run() }
        }
    }

    @Test func serverMigrationsApplyOnAFreshDatabaseAndAgain() async throws {
        for engine in TestEngines.all {
            try await withDatabase(engine) { database in
                let runner = MigrationRunner.forServer(database: database, logger: TestDatabase.logger)
                try await runner.run()
                #expect(try await runner.run() == [])
            }
        }
    }

    @Test func sqliteConnectionsUseWALForeignKeysAndABusyTimeout() async throws {
        try await withDatabase(.sqlite) { database in
            let settings = try await database.withConnection { db in
                (
                    try await db.raw("PRAGMA journal_mode").first()?.decode(column: "journal_mode", as: String.self),
                    try await db.raw("PRAGMA foreign_keys").first()?.decode(column: "foreign_keys", as: Int.self),
                    try await db.raw("PRAGMA busy_timeout").first()?.decode(column: "timeout", as: Int.self)
                )
            }
            #expect(settings.0 == "wal")
            #expect(settings.1 == 1)
            #expect(settings.2 == 5_000)
        }
    }

    @Test(arguments: TestEngines.all)
    func foreignKeysAreEnforced(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            try await database.withConnection { db in
                try await db.create(table: "parents").column("id", type: .text, .primaryKey(autoIncrement: false)).run()
                try await db.create(table: "children")
                    .column("id", type: .text, .primaryKey(autoIncrement: false))
                    .column("parent_id", type: .text, .notNull, .references("parents", "id"))
                    .run()
            }
            await #expect(throws: (any Error).self) {
                try await database.withConnection { db in
                    try await db.insert(into: "children").columns("id", "parent_id").values(SQLBind("c"), SQLBind("missing")).run()
                }
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func storedInstantsReadBackEqualAndMatchInQueries(engine: DatabaseEngine) async throws {
        try await withDatabase(engine) { database in
            let written = (0..<50).map { _ in Date.storageNow.addingTimeInterval(Double.random(in: -1e6...1e6).rounded()) }
            let found = try await database.transaction { db in
                try await db.create(table: "moments").column("id", type: .int, .primaryKey(autoIncrement: false))
                    .column("at", type: engine.instant, .notNull).run()
                var found: [Date] = []
                for (index, instant) in written.enumerated() {
                    try await db.insert(into: "moments").columns("id", "at").values(SQLBind(index), SQLBind(instant)).run()
                    let back = try #require(try await db.select().column("at").from("moments").where("id", .equal, index).first())
                    let read = try back.decode(column: "at", as: Date.self)
                    // What was read is what a cursor sends back: it must select the same row.
                    let matches = try await db.select().column("id").from("moments").where("at", .equal, read).all()
                    #expect(matches.count == 1)
                    found.append(read)
                }
                return found
            }
            #expect(found == written)
        }
    }

    @Test func unreachablePostgresFailsAtOpenNamingTheSetting() async throws {
        do {
            _ = try await Database.open(.postgres(url: "postgres://nobody@127.0.0.1:1/none?tlsmode=disable"), logger: TestDatabase.logger)
            Issue.record("opening an unreachable database should fail")
        } catch {
            #expect(error.description.contains("FITBASE_DATABASE_URL"))
            #expect(error.description.contains("postgres://nobody@127.0.0.1:1/none"))
        }
    }

    /// A checkpoint pass holding writes copies the whole log even while writes keep coming, so the next write starts
    /// the log again from its beginning: under steady writes the log stays bounded instead of growing for as long as
    /// they last. Every row written meanwhile is there.
    @Test func aPassHoldingWritesLetsTheLogStartAgainUnderSteadyWrites() async throws {
        try await TestDatabase.with(.sqlite) { test in
            let database = try await Database.open(test.location, checkpointsInBackground: false, logger: TestDatabase.logger)
            do {
                try await database.transaction { try await $0.raw("CREATE TABLE pages (id INTEGER PRIMARY KEY, body BLOB NOT NULL)").run() }
                let write: @Sendable () async throws -> Void = {
                    try await database.transaction { try await $0.raw("INSERT INTO pages (body) VALUES (randomblob(3000))").run() }
                }
                for _ in 0..<40 { try await write() }
                // Writers keep coming while the passes run.
                let writers = Task {
                    for _ in 0..<200 { try await write() }
                }
                let background = try #require(try await database.checkpointPass())
                #expect(background.logFrames >= 40)
                let held = try #require(try await database.checkpointPass(holdingWrites: true))
                #expect(held.copiedFrames == held.logFrames)
                try await writers.value
                // Once everything is copied, a write starts the log again: it is as long as that one write.
                _ = try await database.checkpointPass(holdingWrites: true)
                try await write()
                let after = try #require(try await database.checkpointPass())
                #expect(after.logFrames > 0 && after.logFrames < 10)
                let count = try await database.withConnection { try await $0.raw("SELECT count(*) AS n FROM pages").first()?.decode(column: "n", as: Int.self) }
                #expect(count == 241)
                // The write connection checkpoints itself only as a backstop.
                let backstop = try await database.transaction { try await $0.raw("PRAGMA wal_autocheckpoint").first()?.decode(column: "wal_autocheckpoint", as: Int.self) }
                #expect(backstop == SQLiteConnectionSetup.writerBackstopPages)
            } catch {
                try? await database.shutdown()
                throw error
            }
            try await database.shutdown()
        }
    }

    // MARK: Helpers

    private func withDatabase(_ engine: DatabaseEngine, _ body: @escaping @Sendable (Database) async throws -> Void) async throws {
        try await TestDatabase.with(engine) { test in
            let database = try await Database.open(test.location, logger: TestDatabase.logger)
            do {
                try await body(database)
            } catch {
                try? await database.shutdown()
                throw error
            }
            try await database.shutdown()
        }
    }
}

private struct Boom: Error {}

private func createNotes(_ database: Database) async throws {
    try await database.withConnection { db in
        try await db.create(table: "notes").column("id", type: .text, .primaryKey(autoIncrement: false)).run()
    }
}

private func insertNote(_ db: any SQLDatabase, _ id: String) async throws {
    try await db.insert(into: "notes").columns("id").values(SQLBind(id)).run()
}

private struct CreateWidgets: Migration {
    let name = "test.create-widgets"
    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "widgets").column("name", type: .text, .primaryKey(autoIncrement: false)).run()
    }
}

private struct SeedWidget: Migration {
    let name = "test.seed-widget"
    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.insert(into: "widgets").columns("name").values(SQLBind("first")).run()
    }
}

private struct HalfDoneThenFails: Migration {
    let name = "test.half-done"
    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "gadgets").column("id", type: .text).run()
        throw Boom()
    }
}

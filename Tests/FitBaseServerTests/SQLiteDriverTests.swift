import FitBaseTestSupport
import Foundation
import NIOPosix
import SQLKit
import SQLiteKit
import SQLiteNIO
import Synchronization
import Testing

@testable import FitBaseServer

/// The SQLite driver under `Database`: values stored exactly as SQLiteKit over SQLiteNIO stores them, kept prepared
/// statements, errors the stores recognise, and the pool (waiting, cancellation, task-locals).
///
/// The time limit only catches a hung pool: Swift Testing counts it from when a test is scheduled, so in the full
/// suite on both engines the wait for a free slot (minutes on 2 cores) is part of it.
@Suite(.timeLimit(.minutes(10))) struct SQLiteDriverTests {
    @Test func everyBindTypeIsStoredAndReadAsThroughSQLiteNIO() async throws {
        try await withSQLite { database, path in
            try await database.withConnection { db in try await db.raw(SQLQueryString(BindSample.table)).run() }
            let sample = BindSample.make()
            try await database.withConnection { db in try await sample.insert(id: "direct", on: db) }
            let nio = try await SQLiteConnection.open(storage: .file(path: path), logger: TestDatabase.logger)
            do {
                try await sample.insert(id: "nio", on: nio.sql())

                for id in ["direct", "nio"] {
                    // The same stored values, as SQLiteNIO reads them and as the driver reads them.
                    let nioRow = try #require(try await nio.query("SELECT * FROM samples WHERE id = ?", [.text(id)]).first)
                    let directRow = try #require(
                        try await database.withConnection { db in try await db.raw("SELECT * FROM samples WHERE id = \(bind: id)").first() }
                            as? SQLiteDirectRow
                    )
                    #expect(directRow.allColumns == nioRow.columns.map(\.name))
                    #expect(directRow.values == nioRow.columns.map(\.data))
                    // Decoded through either path, the values are the ones written.
                    let viaNIO = try #require(try await nio.sql().raw("SELECT * FROM samples WHERE id = \(bind: id)").first())
                    #expect(try BindSample(row: viaNIO) == sample)
                    #expect(try BindSample(row: directRow) == sample)
                }
                let stored = try await nio.query("SELECT typeof(at) AS at, typeof(uuid) AS uuid, typeof(flag) AS flag, typeof(data) AS data, typeof(json) AS json FROM samples WHERE id = 'direct'")
                #expect(stored.first?.columns.map(\.data) == [.text("real"), .text("text"), .text("integer"), .text("blob"), .text("text")])
                try await nio.close().get()
            } catch {
                try? await nio.close().get()
                throw error
            }
        }
    }

    /// Each type rows convert themselves, and its optional, read as SQLiteKit's decoder reads it: a value, `nil` for
    /// `NULL`, and a stored kind that is not the type's left to the decoder (which converts or refuses it).
    @Test func theTypesRowsConvertThemselvesReadAsTheDecoderReadsThem() async throws {
        let id = UUID()
        try await withSQLite { database, _ in
            let row = try #require(
                try await database.withConnection { db in
                    try await db.raw(
                        "SELECT 'AB' AS text, \(bind: id) AS uuid, 'x' AS bad_uuid, 42 AS int, 1 AS flag, 7 AS flag_int, 1.5 AS real, 1700000000 AS whole, x'0102' AS blob, NULL AS absent"
                    ).first()
                })
            let decoder = SQLiteDataDecoder()
            let direct = try #require(row as? SQLiteDirectRow)
            func check<T: Decodable & Equatable>(_ column: String, as type: T.Type) throws {
                let value = direct.values[try #require(direct.allColumns.firstIndex(of: column))]
                let expected = try? decoder.decode(T.self, from: value)
                let expectedOptional = try? decoder.decode(T?.self, from: value)
                #expect((try? row.decode(column: column, as: T.self)) == expected, "\(column) as \(T.self)")
                #expect((try? row.decode(column: column, as: T?.self)) == expectedOptional, "\(column) as \(T.self)?")
                #expect((try? direct.decode(column: column, as: T.self)) == expected, "\(column) as \(T.self), specialized")
            }
            for column in ["text", "uuid", "bad_uuid", "int", "flag", "flag_int", "real", "whole", "blob", "absent"] {
                try check(column, as: String.self)
                try check(column, as: UUID.self)
                try check(column, as: Int.self)
                try check(column, as: Int64.self)
                try check(column, as: Bool.self)
                try check(column, as: Date.self)
                try check(column, as: Double.self)
                try check(column, as: Data.self)
            }
            #expect(try row.decode(column: "uuid", as: UUID.self) == id)
            #expect(try row.decode(column: "absent", as: Date?.self) == nil)
            #expect(try row.decode(column: "blob", as: Data?.self) == Data([1, 2]))
            #expect(try row.decode(column: "flag", as: Bool?.self) == true)
            #expect(throws: (any Error).self) { try row.decode(column: "absent", as: Int.self) }
        }
    }

    /// The binds converted without SQLiteKit's encoder come out exactly as the encoder converts them.
    @Test func bindsConvertedDirectlyEqualTheEncodersConversion() async throws {
        try await withSQLite { database, _ in
            let now = Date.storageNow
            let binds: [any Encodable & Sendable] = [
                "text", UUID(), 42, now, true, false, Data([0, 1, 0xFF]), Data(), Date?.some(now), Date?.none, String?.some("here"), String?.none,
                Int?.some(-7), Int?.none,
            ]
            let (direct, encoded) = try await database.withConnection { db in
                let connection = try #require(db as? SQLiteDirectConnection)
                return (try binds.map { try connection.sqliteData($0) }, try binds.map { try SQLiteDataEncoder().encode($0) })
            }
            #expect(direct == encoded)
        }
    }

    @Test func insertReturningAndTheFetchersWork() async throws {
        try await withSQLite { database, _ in
            let (returned, all, first) = try await database.transaction { db in
                try await db.create(table: "items").column("id", type: .int, .primaryKey(autoIncrement: true))
                    .column("name", type: .text, .notNull).run()
                let returned = try await db.insert(into: "items").columns("name").values(SQLBind("a")).returning("id", "name").first()
                try await db.insert(into: "items").columns("name").values(SQLBind("b")).run()
                let all = try await db.select().column("name").from("items").orderBy("id").all(decodingColumn: "name", as: String.self)
                let first = try await db.raw("SELECT name FROM items WHERE id = \(bind: 2)").first(decodingColumn: "name", as: String.self)
                return (try returned?.decode(column: "name", as: String.self), all, first)
            }
            #expect(returned == "a")
            #expect(all == ["a", "b"])
            #expect(first == "b")
        }
    }

    @Test func keptStatementsRunAgainWithNewBinds() async throws {
        try await withSQLite(maxConnectionsPerEventLoop: 1, loops: 1) { database, _ in
            try await database.transaction { db in
                try await db.create(table: "numbers").column("n", type: .int, .primaryKey(autoIncrement: false)).run()
                for n in 0..<20 { try await db.insert(into: "numbers").columns("n").values(SQLBind(n)).run() }
            }
            let (found, runs) = try await database.withConnection { db in
                var found: [Int] = []
                for n in 0..<20 {
                    found.append(try await db.select().column("n").from("numbers").where("n", .equal, n).first(decodingColumn: "n", as: Int.self) ?? -1)
                }
                // SQLite's own list of the connection's prepared statements (the `sqlite_stmt` table).
                let runs = try await db.raw("SELECT run FROM sqlite_stmt WHERE sql LIKE 'SELECT \"n\" FROM \"numbers\"%'").all(decodingColumn: "run", as: Int.self)
                return (found, runs)
            }
            #expect(found == Array(0..<20))
            #expect(runs == [20])
        }
    }

    @Test func keptStatementsAreBoundedAndFollowSchemaChanges() async throws {
        try await withSQLite(maxConnectionsPerEventLoop: 1, loops: 1) { database, _ in
            let (kept, columnsBefore, columnsAfter) = try await database.withConnection { db in
                for n in 0..<(SQLiteDirectConnection.statementCacheCapacity * 2) {
                    _ = try await db.raw("SELECT \(unsafeRaw: "\(n)") AS n").first()
                }
                let kept = try await db.raw("SELECT COUNT(*) AS n FROM sqlite_stmt").first(decodingColumn: "n", as: Int.self)
                try await db.raw("CREATE TABLE shapes (id INTEGER PRIMARY KEY)").run()
                try await db.raw("INSERT INTO shapes (id) VALUES (1)").run()
                let before = try await db.raw("SELECT * FROM shapes").first()?.allColumns
                try await db.raw("ALTER TABLE shapes ADD COLUMN colour TEXT").run()
                let after = try await db.raw("SELECT * FROM shapes").first()?.allColumns
                return (kept, before, after)
            }
            #expect(try #require(kept) <= SQLiteDirectConnection.statementCacheCapacity)
            #expect(columnsBefore == ["id"])
            #expect(columnsAfter == ["id", "colour"])
        }
    }

    @Test(arguments: TestEngines.all)
    func uniqueViolationsAreRecognisedAndOthersAreNot(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { test in
            let database = try await Database.open(test.location, logger: TestDatabase.logger)
            do {
                try await checkUniqueViolations(on: database, engine: engine)
                try await database.shutdown()
            } catch {
                try? await database.shutdown()
                throw error
            }
        }
    }

    private func checkUniqueViolations(on database: Database, engine: DatabaseEngine) async throws {
        try await database.transaction { db in
            try await db.create(table: "accounts").column("id", type: .text, .primaryKey(autoIncrement: false))
                .column("email", type: .text, .notNull, .unique).run()
            try await db.create(table: "devices").column("id", type: .text, .primaryKey(autoIncrement: false))
                .column("account_id", type: .text, .notNull, .references("accounts", "id")).run()
            try await db.insert(into: "accounts").columns("id", "email").values(SQLBind("a"), SQLBind("a@example.com")).run()
        }
        let samePrimaryKey = await #expect(throws: (any Error).self) {
            try await database.transaction { db in
                try await db.insert(into: "accounts").columns("id", "email").values(SQLBind("a"), SQLBind("other@example.com")).run()
            }
        }
        let sameEmail = await #expect(throws: (any Error).self) {
            try await database.transaction { db in
                try await db.insert(into: "accounts").columns("id", "email").values(SQLBind("b"), SQLBind("a@example.com")).run()
            }
        }
        let missingParent = await #expect(throws: (any Error).self) {
            try await database.transaction { db in
                try await db.insert(into: "devices").columns("id", "account_id").values(SQLBind("d"), SQLBind("nobody")).run()
            }
        }
        #expect(samePrimaryKey.map(Database.isUniqueViolation) == true)
        #expect(sameEmail.map(Database.isUniqueViolation) == true)
        #expect(missingParent.map(Database.isUniqueViolation) == false)
        if engine == .sqlite {
            // Logs keep SQLite's own message.
            #expect(String(describing: try #require(sameEmail)).contains("UNIQUE constraint failed: accounts.email"))
            #expect(String(describing: try #require(missingParent)).contains("FOREIGN KEY constraint failed"))
        }
    }

    @Test func readersSeeTheLastCommitWhileAWriterHoldsItsTransaction() async throws {
        try await withSQLite { database, _ in
            try await database.transaction { db in
                try await db.create(table: "notes").column("id", type: .text, .primaryKey(autoIncrement: false)).run()
            }
            let inserted = OneShotSignal(), mayCommit = OneShotSignal()
            let writer = Task {
                try await database.transaction { db in
                    try await db.insert(into: "notes").columns("id").values(SQLBind("written")).run()
                    inserted.fire()
                    await mayCommit.wait()
                }
            }
            await inserted.wait()
            let countsDuringWrite = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await noteCount(database) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            mayCommit.fire()
            try await writer.value
            #expect(countsDuringWrite == [0, 0, 0, 0])
            #expect(try await noteCount(database) == 1)
        }
    }

    @Test func callersWaitInTurnWhileEveryConnectionIsLent() async throws {
        try await withSQLite(maxConnectionsPerEventLoop: 1, loops: 1) { database, _ in
            let held = OneShotSignal(), release = OneShotSignal()
            let order = ArrivalOrder()
            let holder = Task {
                try await database.withConnection { _ in
                    held.fire()
                    await release.wait()
                    order.append("holder")
                }
            }
            await held.wait()
            let first = Task { try await database.withConnection { _ in order.append("first") } }
            try await Task.sleep(for: .milliseconds(100))
            let second = Task { try await database.withConnection { _ in order.append("second") } }
            try await Task.sleep(for: .milliseconds(200))
            #expect(order.values == [])
            release.fire()
            try await holder.value
            try await first.value
            try await second.value
            #expect(order.values == ["holder", "first", "second"])
        }
    }

    @Test func aCancelledCallerStopsWaitingAndConnectionsComeBackFromCancelledBodies() async throws {
        try await withSQLite(maxConnectionsPerEventLoop: 1, loops: 1) { database, _ in
            let held = OneShotSignal(), release = OneShotSignal()
            let holder = Task {
                try await database.withConnection { _ in
                    held.fire()
                    await release.wait()
                    try Task.checkCancellation()
                }
            }
            await held.wait()
            let waiter = Task { try await database.withConnection { _ in "connection" } }
            try await Task.sleep(for: .milliseconds(100))
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }
            // The holder is cancelled in its body and throws; its connection goes back all the same.
            holder.cancel()
            release.fire()
            await #expect(throws: CancellationError.self) { try await holder.value }
            #expect(try await database.withConnection { db in try await db.raw("SELECT 1 AS one").first(decodingColumn: "one", as: Int.self) } == 1)
        }
    }

    @Test func aTransactionLeftOpenIsRolledBackBeforeTheConnectionIsLentAgain() async throws {
        try await withSQLite(maxConnectionsPerEventLoop: 1, loops: 1) { database, _ in
            try await database.transaction { db in
                try await db.create(table: "notes").column("id", type: .text, .primaryKey(autoIncrement: false)).run()
            }
            try await database.withConnection { db in
                try await db.raw("BEGIN").run()
                try await db.insert(into: "notes").columns("id").values(SQLBind("abandoned")).run()
            }
            try await database.transaction { db in
                try await db.insert(into: "notes").columns("id").values(SQLBind("kept")).run()
            }
            #expect(try await noteCount(database) == 1)
        }
    }

    @Test func theBodyRunsInTheCallersTaskWithItsTaskLocals() async throws {
        try await withSQLite { database, _ in
            let scope = RequestScope(caller: nil, authenticationFailure: nil, requestID: "request-7")
            let seen = try await RequestScope.$current.withValue(scope) {
                try await Self.$marker.withValue("caller") {
                    try await database.withConnection { _ in (RequestScope.current.requestID, Self.marker) }
                }
            }
            #expect(seen.0 == "request-7")
            #expect(seen.1 == "caller")
        }
    }

    @TaskLocal static var marker: String?

    @Test func aShutDownDatabaseRefusesNewWork() async throws {
        try await TestDatabase.with(.sqlite) { test in
            let database = try await Database.open(test.location, logger: TestDatabase.logger)
            try await database.ping()
            try await database.shutdown()
            await #expect(throws: DatabaseShutDownError.self) { try await database.ping() }
        }
    }

    // MARK: Helpers

    /// A database on a fresh SQLite file; `loops` > 0 gives it an event loop group of that many loops (so a pool of
    /// `maxConnectionsPerEventLoop × loops` connections).
    private func withSQLite(
        maxConnectionsPerEventLoop: Int = 4, loops: Int = 0, _ body: @escaping @Sendable (Database, String) async throws -> Void
    ) async throws {
        try await TestDatabase.with(.sqlite) { test in
            guard case .sqlite(let path) = test.location else { return }
            let group = loops > 0 ? MultiThreadedEventLoopGroup(numberOfThreads: loops) : nil
            let database = try await Database.open(
                test.location, maxConnectionsPerEventLoop: maxConnectionsPerEventLoop,
                eventLoopGroup: group ?? MultiThreadedEventLoopGroup.singleton, logger: TestDatabase.logger
            )
            do {
                try await body(database, path)
                try await database.shutdown()
            } catch {
                try? await database.shutdown()
                try? await group?.shutdownGracefully()
                throw error
            }
            try await group?.shutdownGracefully()
        }
    }
}

// Measures the storage layer alone (see scripts/bench/bench-storage.sh): single-row primary-key SELECTs and single-row
// INSERT transactions through `Database`, one at a time (latency) and from 16 tasks at once (throughput).
//
//   fitbase-storage-bench [SELECTS [INSERTS [DATABASE_URL]]]
//
// SQLite in a temp directory unless DATABASE_URL names another database (it must be empty of `bench_rows`).
import FitBaseServer
import Foundation
import Logging
import SQLKit

@main
struct StorageBenchmark {
    static let concurrency = 16
    static let seededRows = 1_000

    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        let selects = arguments.first.flatMap(Int.init) ?? 20_000
        let inserts = arguments.dropFirst().first.flatMap(Int.init) ?? 5_000
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-storage-bench-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let location = arguments.dropFirst(2).first.flatMap(DatabaseLocation.init(parsing:))
            ?? .sqlite(path: directory.appendingPathComponent("bench.sqlite").path)

        var logger = Logger(label: "fitbase.storage-bench")
        logger.logLevel = .warning
        let database = try await Database.open(location, logger: logger)
        do {
            try await run(on: database, selects: selects, inserts: inserts)
            try await database.shutdown()
        } catch {
            try? await database.shutdown()
            throw error
        }
    }

    static func run(on database: Database, selects: Int, inserts: Int) async throws {
        try await database.transaction { db in
            try await db.create(table: "bench_rows")
                .column("id", type: .text, .primaryKey(autoIncrement: false))
                .column("owner", type: .text, .notNull)
                .column("amount", type: .bigint, .notNull)
                .column("note", type: .text)
                .column("created_at", type: .timestamp, .notNull)
                .run()
            for index in 0..<seededRows {
                try await insertRow(id: "seed-\(index)", on: db)
            }
        }
        print("engine: \(database.engine), \(seededRows) seeded rows")

        try await measure("SELECT by primary key, 1 task", count: selects, tasks: 1) { index in
            try await selectRow(index, on: database)
        }
        try await measure("SELECT by primary key, \(concurrency) tasks", count: selects, tasks: concurrency) { index in
            try await selectRow(index, on: database)
        }
        try await measure("INSERT transaction, 1 task", count: inserts, tasks: 1) { index in
            try await database.transaction { db in try await insertRow(id: "one-\(index)", on: db) }
        }
        try await measure("INSERT transaction, \(concurrency) tasks", count: inserts, tasks: concurrency) { index in
            try await database.transaction { db in try await insertRow(id: "many-\(index)", on: db) }
        }
    }

    static func selectRow(_ index: Int, on database: Database) async throws {
        let amount = try await database.withConnection { db in
            try await db.select().columns("owner", "amount", "note", "created_at").from("bench_rows")
                .where("id", .equal, "seed-\(index % seededRows)").first()?.decode(column: "amount", as: Int64.self)
        }
        guard amount == Int64(index % seededRows) else { throw BenchmarkFailure(what: "row seed-\(index % seededRows) read back wrong") }
    }

    static func insertRow(id: String, on db: any SQLDatabase) async throws {
        let amount = Int64(id.split(separator: "-").last.flatMap { Int64($0) } ?? 0)
        try await db.insert(into: "bench_rows").columns("id", "owner", "amount", "note", "created_at")
            .values(SQLBind(id), SQLBind("owner-\(amount % 10)"), SQLBind(amount), SQLBind(Optional<String>.none), SQLBind(Date()))
            .run()
    }

    /// Runs `operation` `count` times split over `tasks` tasks and prints the rate and the mean time per operation.
    static func measure(
        _ name: String, count: Int, tasks: Int, _ operation: @escaping @Sendable (Int) async throws -> Void
    ) async throws {
        let clock = ContinuousClock()
        let elapsed = try await clock.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        for index in stride(from: task, to: count, by: tasks) { try await operation(index) }
                    }
                }
                try await group.waitForAll()
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let line = name.padding(toLength: 36, withPad: " ", startingAt: 0)
            + String(format: " %7d ops in %7.3f s: %9.0f ops/s, %8.1f µs/op", count, seconds, Double(count) / seconds, seconds / Double(count) * 1e6)
        print(line)
    }
}

struct BenchmarkFailure: Error {
    let what: String
}

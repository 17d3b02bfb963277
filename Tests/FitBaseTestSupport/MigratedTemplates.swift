import FitBaseServer
import Foundation
import SQLKit
import Synchronization

/// One database per engine that this process migrates once, which tests that start the application copy instead of
/// running every migration themselves: a file copy on SQLite, `CREATE DATABASE … TEMPLATE` on PostgreSQL.
///
/// The template holds the schema and nothing else — no keys, no rows a start-up writes — so a copy is what a fresh
/// server's database looks like once its migrations have run, and the application's start-up still does the rest.
/// Migrations are idempotent, so an application started on a copy finds nothing to apply.
final class MigratedTemplates: Sendable {
    static let shared = MigratedTemplates()

    /// Where a template is: a SQLite file, or a PostgreSQL database name.
    enum Template: Sendable {
        case sqlite(path: String)
        case postgres(name: String)
    }

    /// Templates older than this are another run's leftovers (a process cannot remove its own when it exits).
    private static let staleAfter: TimeInterval = 6 * 60 * 60

    private let building = Mutex<[DatabaseEngine: Task<Template, any Error>]>([:])

    /// The template for `engine`, migrated on first use; a failure is retried by the next caller.
    func template(for engine: DatabaseEngine) async throws -> Template {
        let task = building.withLock { tasks in
            if let task = tasks[engine] { return task }
            let task = Task { try await Self.make(engine) }
            tasks[engine] = task
            return task
        }
        do {
            return try await task.value
        } catch {
            building.withLock { tasks in tasks[engine] = nil }
            throw error
        }
    }

    private static func make(_ engine: DatabaseEngine) async throws -> Template {
        let stamp = Int(Date.now.timeIntervalSince1970)
        let suffix = UUID().uuidString.prefix(8).lowercased()
        switch engine {
        case .sqlite:
            removeStaleSQLiteTemplates(before: stamp)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-template-\(stamp)-\(suffix)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/template.sqlite"
            try await migrate(.sqlite(path: path))
            // The last connection to close checkpoints the write-ahead log into the file; a copy of the file alone
            // must be the whole database.
            guard !FileManager.default.fileExists(atPath: path + "-wal") else { throw TemplateNotCheckpointed(path: path) }
            return .sqlite(path: path)
        case .postgres:
            let serverURL = try TestDatabase.postgresServerURL()
            let name = "fitbase_template_\(stamp)_\(suffix)"
            try await TestDatabase.withAdminConnection(serverURL) { db in
                try await dropStalePostgresTemplates(before: stamp, on: db)
                try await db.raw("CREATE DATABASE \(unsafeRaw: name)").run()
            }
            try await migrate(.postgres(url: try TestDatabase.replacingDatabaseName(in: serverURL, with: name)))
            return .postgres(name: name)
        }
    }

    /// Applies every migration of this build to the database at `location`, then closes every connection to it
    /// (PostgreSQL copies a template only while nobody is connected to it).
    private static func migrate(_ location: DatabaseLocation) async throws {
        let database = try await Database.open(location, logger: TestDatabase.logger)
        do {
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
        } catch {
            try? await database.shutdown()
            throw error
        }
        try await database.shutdown()
    }

    private static func removeStaleSQLiteTemplates(before now: Int) {
        let temporary = FileManager.default.temporaryDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix("fitbase-template-") {
            guard let stamp = name.split(separator: "-").dropFirst(2).first.flatMap({ Int($0) }),
                TimeInterval(now - stamp) > staleAfter
            else { continue }
            try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
        }
    }

    private static func dropStalePostgresTemplates(before now: Int, on db: any SQLDatabase) async throws {
        let rows = try await db.raw("SELECT datname FROM pg_database WHERE datname LIKE 'fitbase\\_template\\_%'").all()
        for row in rows {
            let name = try row.decode(column: "datname", as: String.self)
            guard let stamp = name.split(separator: "_").dropFirst(2).first.flatMap({ Int($0) }),
                TimeInterval(now - stamp) > staleAfter
            else { continue }
            // Another run may be copying it at this moment: then it is not stale after all, and stays.
            try? await db.raw("DROP DATABASE IF EXISTS \(unsafeRaw: name)").run()
        }
    }
}

/// SQLite left a write-ahead log beside the template after every connection closed.
struct TemplateNotCheckpointed: Error, CustomStringConvertible {
    let path: String
    var description: String { "the migrated template at \(path) still has a write-ahead log; a copy of the file alone would lose it" }
}

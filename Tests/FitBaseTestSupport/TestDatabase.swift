import FitBaseServer
import Foundation
import Logging
import SQLKit

/// The engines a storage-touching test runs on: SQLite always, PostgreSQL when `FITBASE_TEST_POSTGRES_URL` is set.
public enum TestEngines {
    public static var all: [DatabaseEngine] {
        ProcessInfo.processInfo.environment["FITBASE_TEST_POSTGRES_URL"] == nil ? [.sqlite] : [.sqlite, .postgres]
    }
}

/// A throw-away database for one test: a temp SQLite file, or a fresh PostgreSQL database created on the server
/// named by `FITBASE_TEST_POSTGRES_URL` and dropped afterwards.
public struct TestDatabase: Sendable {
    public let location: DatabaseLocation
    /// A temp directory the test may use as the server's data directory; removed afterwards.
    public let dataDirectory: String
    private let dropPostgresDatabase: String?

    public static let logger: Logger = {
        var logger = Logger(label: "fitbase.test")
        logger.logLevel = ProcessInfo.processInfo.environment["FITBASE_TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        return logger
    }()

    /// Runs `body` with a fresh database of `engine`, cleaning up whether it succeeds or throws; waits first while
    /// ``TestAdmission`` has as many tests running as it allows (`exclusive`: until no other test holds a database).
    ///
    /// `migrated`: the database starts as a copy of one this process migrated once (every migration of this build
    /// applied, nothing else), so a test that starts the application skips the migrations; false: it starts empty.
    public static func with<Result>(
        _ engine: DatabaseEngine, exclusive: Bool = false, migrated: Bool = false, _ body: (TestDatabase) async throws -> Result
    ) async throws -> Result {
        try await TestAdmission.shared.admit(exclusive: exclusive) {
            let database = try await make(engine, from: migrated ? MigratedTemplates.shared.template(for: engine) : nil)
            do {
                let result = try await body(database)
                try await database.remove()
                return result
            } catch {
                try? await database.remove()
                throw error
            }
        }
    }

    /// A fresh database of `engine`: empty, or a copy of `template`.
    static func make(_ engine: DatabaseEngine, from template: MigratedTemplates.Template? = nil) async throws -> TestDatabase {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("fitbase-test-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        switch engine {
        case .sqlite:
            let path = directory + "/test.sqlite"
            if case .sqlite(let templatePath) = template { try FileManager.default.copyItem(atPath: templatePath, toPath: path) }
            return TestDatabase(location: .sqlite(path: path), dataDirectory: directory, dropPostgresDatabase: nil)
        case .postgres:
            let serverURL = try postgresServerURL()
            let name = "fitbase_test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
            let source = if case .postgres(let templateName) = template { " TEMPLATE \(templateName)" } else { "" }
            try await withAdminConnection(serverURL) { db in
                try await db.raw("CREATE DATABASE \(unsafeRaw: name)\(unsafeRaw: source)").run()
            }
            return TestDatabase(
                location: .postgres(url: try replacingDatabaseName(in: serverURL, with: name)),
                dataDirectory: directory,
                dropPostgresDatabase: name
            )
        }
    }

    func remove() async throws {
        try? FileManager.default.removeItem(atPath: dataDirectory)
        if let name = dropPostgresDatabase, let serverURL = ProcessInfo.processInfo.environment["FITBASE_TEST_POSTGRES_URL"] {
            try await Self.withAdminConnection(serverURL) { db in
                try await db.raw("DROP DATABASE IF EXISTS \(unsafeRaw: name) WITH (FORCE)").run()
            }
        }
    }

    static func postgresServerURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["FITBASE_TEST_POSTGRES_URL"] else {
            throw TestDatabaseError.postgresNotConfigured
        }
        return url
    }

    static func withAdminConnection(_ url: String, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Void) async throws {
        let admin = try await Database.open(.postgres(url: url), maxConnectionsPerEventLoop: 1, logger: logger)
        do {
            try await admin.withConnection(body)
        } catch {
            try? await admin.shutdown()
            throw error
        }
        try await admin.shutdown()
    }

    static func replacingDatabaseName(in url: String, with name: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw TestDatabaseError.invalidURL(url) }
        components.path = "/" + name
        guard let result = components.string else { throw TestDatabaseError.invalidURL(url) }
        return result
    }
}

enum TestDatabaseError: Error {
    case postgresNotConfigured
    case invalidURL(String)
}

import ArgumentParser
import FitBaseServer
import Logging

/// `fitbase migrate`: applies pending schema migrations and exits (`serve` also does this on start).
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending database migrations and exit.",
        discussion: "Safe to run repeatedly and while other instances run; `serve` applies migrations on start too."
    )

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let configuration = try options.resolve()
        bootstrapLogging(level: configuration.logLevel)
        let logger = Logger(label: "fitbase.migrate")
        try await withDatabase(configuration, logger: logger) { database in
            let applied = try await MigrationRunner.forServer(database: database, logger: logger).run()
            print(applied.isEmpty ? "Database is up to date." : "Applied \(applied.count) migration(s): \(applied.joined(separator: ", "))")
        }
    }
}

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
        let database: Database
        do {
            database = try await Database.open(configuration.database, logger: logger)
        } catch {
            exitWithStartupError(error)
        }
        do {
            let applied = try await MigrationRunner.forServer(database: database, logger: logger).run()
            print(applied.isEmpty ? "Database is up to date." : "Applied \(applied.count) migration(s): \(applied.joined(separator: ", "))")
        } catch {
            try? await database.shutdown()
            throw error
        }
        try await database.shutdown()
    }
}

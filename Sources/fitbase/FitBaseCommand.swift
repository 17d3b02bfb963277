import ArgumentParser
import FitBaseServer

/// `fitbase`: the FitBase server and its administration commands.
@main
struct FitBaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fitbase",
        abstract: "FitBase: a self-hostable backend for fitness and health apps.",
        discussion: """
            Settings come from flags, then FITBASE_* environment variables, then defaults that work locally \
            (127.0.0.1:8080, SQLite in ./fitbase-data).
            """,
        subcommands: [
            Serve.self, Migrate.self, Seed.self, Admin.self, Config.self, Keys.self, Audit.self, Backup.self, Restore.self,
            ImageWorkerCommand.self,
        ]
    )
}

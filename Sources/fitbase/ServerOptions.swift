import ArgumentParser
import FitBaseServer
import Foundation
import Logging

/// The flags shared by every command that opens the server's data.
///
/// Values are read as text and validated by `ServerConfiguration.resolve`, so a bad flag and a bad environment
/// variable fail the same way: one line naming the setting.
struct ServerOptions: ParsableArguments {
    @Option(help: "Interface to listen on. [env: FITBASE_HOST] (default: 127.0.0.1)")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free port. [env: FITBASE_PORT] (default: 8080)")
    var port: String?

    @Option(help: "Directory for the SQLite file and generated keys. [env: FITBASE_DATA_DIR] (default: ./fitbase-data)")
    var dataDir: String?

    @Option(help: "sqlite:///path/file.sqlite, a file path, or postgres://user:pass@host:port/db. [env: FITBASE_DATABASE_URL] (default: SQLite in the data dir)")
    var databaseURL: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical. [env: FITBASE_LOG_LEVEL] (default: info)")
    var logLevel: String?

    @Option(help: "URL clients reach this server at, used in links. [env: FITBASE_PUBLIC_URL] (default: http://HOST:PORT)")
    var publicURL: String?

    @Option(help: "Largest request body accepted, in bytes. [env: FITBASE_MAX_BODY_BYTES] (default: 1048576)")
    var maxBodyBytes: String?

    @Option(help: "Serve GET /metrics on this port too (0 picks a free one). [env: FITBASE_METRICS_PORT] (default: none)")
    var metricsPort: String?

    /// Resolves the configuration or exits with status 78 (EX_CONFIG) after one line naming the bad setting.
    func resolve() throws -> ServerConfiguration {
        do {
            return try ServerConfiguration.resolve(
                flags: .init(
                    host: host, port: port, dataDirectory: dataDir, databaseURL: databaseURL, logLevel: logLevel,
                    publicURL: publicURL, maxBodyBytes: maxBodyBytes, metricsPort: metricsPort
                )
            )
        } catch {
            exitWithStartupError(error)
        }
    }
}

/// Prints one line to standard error and exits with EX_CONFIG, for failures of configuration at start-up.
func exitWithStartupError(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("fitbase: \(error)\n".utf8))
    exit(78)
}

/// Opens the configured database (failing to is a start-up error: one line, exit status 78), runs `body` with it and
/// shuts it down, whether `body` returns or throws.
func withDatabase<Result>(_ configuration: ServerConfiguration, logger: Logger, _ body: (Database) async throws -> Result) async throws -> Result {
    let database: Database
    do {
        database = try await Database.open(configuration.database, logger: logger)
    } catch {
        exitWithStartupError(error)
    }
    let result: Result
    do {
        result = try await body(database)
    } catch {
        try? await database.shutdown()
        throw error
    }
    try await database.shutdown()
    return result
}

/// Runs one command of the server's shell: resolves the configuration, starts logging, runs `command` and prints what
/// it says; a refusal is one line on standard error and exit status 1.
func administer(_ options: ServerOptions, _ command: (ServerConfiguration) async throws -> String) async throws {
    let configuration = try options.resolve()
    bootstrapLogging(level: configuration.logLevel)
    let said: String
    do {
        said = try await command(configuration)
    } catch {
        FileHandle.standardError.write(Data("fitbase: \(error)\n".utf8))
        throw ExitCode.failure
    }
    print(said)
}

/// Sends logs to standard error at the configured level; called once per process.
func bootstrapLogging(level: Logger.Level) {
    LoggingSystem.bootstrap { label in
        StandardErrorLogHandler(label: label, level: level, metadataProvider: RequestLogging.metadataProvider)
    }
}

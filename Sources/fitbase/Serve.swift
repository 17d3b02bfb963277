import ArgumentParser
import FitBaseServer
import Foundation
import Hummingbird

/// `fitbase serve`: runs the HTTP server until SIGINT or SIGTERM, then drains in-flight requests and exits 0.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the FitBase server.",
        discussion: """
            Applies pending migrations, then serves the API. With no flags: 127.0.0.1:8080, SQLite in ./fitbase-data. \
            Prints the URL it listens on and the data directory in use. SIGINT/SIGTERM stop it gracefully.
            """
    )

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let configuration = try options.resolve()
        bootstrapLogging(level: configuration.logLevel)
        let app: FitBaseApplication
        do {
            app = try await buildApplication(configuration: configuration) { url in
                let dataDirectory = URL(fileURLWithPath: configuration.dataDirectory).standardizedFileURL.path
                let banner = """
                    FitBase listening on \(url)
                    Data directory: \(dataDirectory)
                    Database: \(configuration.database)

                    """
                // Written straight to the file descriptor: a pipe would otherwise buffer the banner.
                FileHandle.standardOutput.write(Data(banner.utf8))
                StartUpMemory.release()
            }
        } catch {
            // Everything buildApplication throws is a start-up problem: a setting, a key file, the database.
            exitWithStartupError(error)
        }
        try await app.runService()
    }
}

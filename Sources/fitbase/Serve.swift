import ArgumentParser
import FitBaseServer
import Foundation
import Hummingbird
import NIOCore
import NIOPosix

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

    @Flag(
        help: """
            On a host beyond loopback, create master.key in the data directory when there is none (else the start is \
            refused: give FITBASE_MASTER_KEY). [env: FITBASE_ALLOW_GENERATED_MASTER_KEY]
            """
    )
    var allowGeneratedMasterKey = false

    func run() async throws {
        var resolved = try options.resolve()
        if allowGeneratedMasterKey { resolved.identityProviders.allowsGeneratedMasterKey = true }
        bootstrapLogging(level: resolved.logLevel)
        if resolved.port == 0, resolved.publicURL == "http://\(resolved.host):0" {
            // A free port, chosen now rather than when the server binds: the links the server writes (invites, e-mail)
            // and its token issuer must name the port clients reach.
            do {
                resolved.port = try await Self.freePort(on: resolved.host)
            } catch {
                exitWithStartupError(error)
            }
            resolved.publicURL = "http://\(resolved.host):\(resolved.port)"
        }
        let configuration = resolved
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

    /// A port nothing listens on at `host`: the one the system gives a socket bound to port 0.
    static func freePort(on host: String) async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: 0).get()
        let port = channel.localAddress?.port
        try await channel.close()
        guard let port else { throw FreePortError(host: host) }
        return port
    }
}

struct FreePortError: Error, CustomStringConvertible {
    let host: String
    var description: String { "port: no free port could be found on \(host)" }
}

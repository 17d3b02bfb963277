import ArgumentParser
import FitBaseServer
import Foundation

/// `fitbase image-worker`: decodes one photo from standard input under resource limits (started by the server for
/// each photo upload, never by hand).
struct ImageWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ImageWorker.subcommand,
        abstract: "Decode one photo from standard input and write its thumbnail (run by the server).",
        shouldDisplay: false
    )

    @Option(help: "Address-space limit, in bytes.")
    var memoryBytes: Int

    @Option(help: "CPU-time limit, in seconds.")
    var cpuSeconds: Int

    func run() throws {
        throw ExitCode(ImageWorker.run(memoryBytes: memoryBytes, cpuSeconds: cpuSeconds))
    }
}

import ArgumentParser
import FitBaseServer
import Foundation
import Logging

/// `fitbase seed --catalog FILE.json [--media DIR]`: imports or updates a workout catalog, idempotently, and the
/// workouts' thumbnails and videos.
struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import or update the workout catalog from a JSON file.",
        discussion: """
            The file has the demo catalog's shape: {"workouts": [...], "programs": [...]} with fixed UUIDs, so running \
            it again updates records instead of duplicating them. Every invalid record is reported with its index, \
            title and field, and nothing is imported then. Media comes from --media, or from a folder named `media` \
            beside the catalog file: <workout id>/thumbnail.(jpg|jpeg|png|heic) and <workout id>/video.(mp4|mov), \
            stored in the configured media store (FITBASE_STORAGE_URL) as an admin's uploads are.
            """
    )

    @Option(help: "The catalog file to import.")
    var catalog: String

    @Option(help: "A folder of workout media to import (default: `media` beside the catalog file, when there is one).")
    var media: String?

    @OptionGroup var options: ServerOptions

    func run() async throws {
        let configuration = try options.resolve()
        bootstrapLogging(level: configuration.logLevel)
        let logger = Logger(label: "fitbase.seed")
        guard let data = FileManager.default.contents(atPath: catalog) else {
            exitWithStartupError(CatalogFileError(path: catalog))
        }
        let parsed: CatalogImport
        do {
            parsed = try CatalogImport(data: data)
        } catch {
            FileHandle.standardError.write(Data("fitbase: \(catalog) is not a valid catalog:\n\(error)\n".utf8))
            throw ExitCode(65)  // EX_DATAERR
        }
        try await withDatabase(configuration, logger: logger) { database in
            try await MigrationRunner.forServer(database: database, logger: logger).run()
            let bar = ProgressBar(total: parsed.recordCount)
            try await parsed.write(into: database, now: ServerClock.system.now) { done, _ in bar.update(done) }
            bar.finish()
            print("Imported \(parsed.workoutCount) workouts and \(parsed.programCount) programs.")
            guard let folder = mediaFolder else { return }
            let files: CatalogMediaImport
            do {
                files = try await CatalogMediaImport(folder: folder, database: database)
                let bar = ProgressBar(total: files.count)
                try await files.write(configuration: configuration, database: database, logger: logger, now: ServerClock.system.now) { done, _ in
                    bar.update(done)
                }
                bar.finish()
            } catch let error as CatalogMediaImportError {
                FileHandle.standardError.write(Data("fitbase: \(error)\n".utf8))
                throw ExitCode(65)  // EX_DATAERR
            }
            print("Imported \(files.count) media files from \(folder).")
        }
    }
}

extension Seed {
    /// `--media`, else `media` beside the catalog file when it is a folder.
    var mediaFolder: String? {
        if let media { return media }
        let beside = URL(fileURLWithPath: catalog).deletingLastPathComponent().appendingPathComponent("media").path
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: beside, isDirectory: &isDirectory) && isDirectory.boolValue ? beside : nil
    }
}

struct CatalogFileError: Error, CustomStringConvertible {
    let path: String
    var description: String { "cannot read catalog file \(path)" }
}

/// A one-line progress bar on standard error, redrawn at most once per percent; silent when stderr is not a terminal.
final class ProgressBar: @unchecked Sendable {
    private let total: Int
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private let lock = NSLock()
    private var shownPercent = -1

    init(total: Int) {
        self.total = max(1, total)
    }

    func update(_ done: Int) {
        guard isTerminal else { return }
        let percent = done * 100 / total
        lock.lock()
        defer { lock.unlock() }
        guard percent != shownPercent else { return }
        shownPercent = percent
        let filled = percent * 30 / 100
        let line = "\r[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: 30 - filled))] \(percent)% (\(done)/\(total))"
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        guard isTerminal else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

import AsyncHTTPClient
import FitBaseCore
import Foundation
import Logging
import _NIOFileSystem

/// `fitbase seed`'s media: a folder holding, for each workout that has any, `<workout id>/thumbnail.<jpg|jpeg|png|heic>`
/// and `<workout id>/video.<mp4|mov>`, stored as an admin's uploads are (checked, cleaned, streamed from disk). The
/// whole folder is checked before anything is stored: an unknown workout or file name stops the import, naming it.
/// Running it again replaces each file with a new version.
package struct CatalogMediaImport: Sendable {
    /// One file to store.
    struct Entry: Sendable {
        let workout: WorkoutID
        let kind: WorkoutMediaKind
        let path: String
    }

    let entries: [Entry]

    package var count: Int { entries.count }

    /// The files of `folder`, checked against the catalog in `database`.
    package init(folder: String, database: Database) async throws {
        let manager = FileManager.default
        let catalog = CatalogStore(database: database)
        var entries: [Entry] = []
        for name in try manager.contentsOfDirectory(atPath: folder).sorted() where !name.hasPrefix(".") {
            let directory = folder + "/" + name
            guard let workout = WorkoutID(name), try await catalog.workout(workout) != nil else {
                throw CatalogMediaImportError(path: directory, reason: "is not the id of a workout in the catalog")
            }
            for file in try manager.contentsOfDirectory(atPath: directory).sorted() where !file.hasPrefix(".") {
                let parts = file.lowercased().split(separator: ".")
                let kind: WorkoutMediaKind? =
                    switch (parts.first, parts.count == 2 ? parts.last : nil) {
                    case ("thumbnail", "jpg"?), ("thumbnail", "jpeg"?), ("thumbnail", "png"?), ("thumbnail", "heic"?): .thumbnail
                    case ("video", "mp4"?), ("video", "mov"?): .video
                    default: nil
                    }
                guard let kind else {
                    throw CatalogMediaImportError(
                        path: directory + "/" + file, reason: "is neither thumbnail.(jpg|jpeg|png|heic) nor video.(mp4|mov)")
                }
                entries.append(Entry(workout: workout, kind: kind, path: directory + "/" + file))
            }
        }
        self.entries = entries
    }

    /// Stores every file in the media store `configuration` names, reporting `(done, total)` as it goes.
    package func write(
        configuration: ServerConfiguration, database: Database, logger: Logger, now: Date,
        progress: @escaping @Sendable (Int, Int) -> Void
    ) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let uploads = WorkoutMediaUploads(
                store: WorkoutMediaStore(database: database), catalog: CatalogStore(database: database),
                storage: MediaFeature.storage(for: configuration, httpClient: client),
                inspector: ImageInspector(maxPixels: configuration.media.photoMaxPixels), configuration: configuration.media, logger: logger
            )
            for (index, entry) in entries.enumerated() {
                do {
                    _ = try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(entry.path)) { handle in
                        try await uploads.upload(handle.readChunks(chunkLength: .mebibytes(1)), kind: entry.kind, to: entry.workout, now: now)
                    }
                } catch let problem as Problem {
                    throw CatalogMediaImportError(path: entry.path, reason: problem.detail ?? problem.title)
                }
                progress(index + 1, entries.count)
            }
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

/// A file or folder `fitbase seed` cannot import.
package struct CatalogMediaImportError: Error, CustomStringConvertible {
    let path: String
    let reason: String

    package var description: String { "\(path) \(reason)" }
}

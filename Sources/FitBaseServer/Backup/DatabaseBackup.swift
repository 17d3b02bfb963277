import Crypto
import Foundation
import Logging
import SQLKit

/// `fitbase backup` and `fitbase restore` on the embedded SQLite deployment.
///
/// A backup is an online, consistent copy: `VACUUM INTO` writes a snapshot of the database as one read transaction
/// sees it, while the server goes on serving (readers and the writer are not held; WAL mode keeps the snapshot's pages
/// until it ends), and the health data key store is copied the same way. Both go into one tar archive with a manifest
/// (docs/console-and-ops.md, "Backups", documents the format). A restore refuses a data directory that is not empty,
/// checks every file against the manifest's SHA-256 and SQLite's `integrity_check`, and only then puts them in place.
///
/// The master key is never in a backup: restored data opens only with the master key it was sealed under.
public enum DatabaseBackup {
    /// The archive's manifest (`manifest.json`, its first entry).
    struct Manifest: Codable, Equatable {
        var format = "fitbase-backup"
        var version = 1
        var createdAt: Date
        var engine = "sqlite"
        /// Whether the health data key store is in the archive.
        var includesKeys: Bool
        /// The last migration the database had applied.
        var lastMigration: String?
        var files: [File]

        struct File: Codable, Equatable {
            /// The entry's name in the archive: `fitbase.sqlite`, `keystore.sqlite`, or `media/<object key>`.
            var name: String
            /// `data`, `keystore` or `media`.
            var role: String
            var bytes: UInt64
            var sha256: String
        }
    }

    /// What a backup wrote.
    public struct Report: Sendable {
        public let path: String
        public let bytes: UInt64
        public let includesKeys: Bool
        public let lastMigration: String?
    }

    /// The warning every backup that holds the key store prints.
    public static let keysWarning = """
        WARNING: this backup holds the health data key store. Restoring it brings back the data keys of every account \
        deleted after the backup was taken, which undoes their crypto-shredding: any copy of their health data can be \
        read again. Keep it apart from the data's other copies and destroy it on schedule, or back up with --without-keys \
        (a restore then starts with no health data keys: health data in the backup cannot be read).
        """

    /// How to back up a PostgreSQL deployment (`fitbase backup` does not).
    public static let postgresRecipe = """
        fitbase backup copies the embedded SQLite database. On PostgreSQL use pg_dump, which takes a consistent snapshot \
        while the servers run:
          pg_dump --format=custom --file=fitbase.dump "$FITBASE_DATABASE_URL"
          pg_dump --format=custom --file=keystore.dump "$FITBASE_KEYSTORE_URL"   # when the keys have a database of their own
        and restore into an empty database with:
          pg_restore --no-owner --dbname="$FITBASE_DATABASE_URL" fitbase.dump
        Keep keystore.dump apart from fitbase.dump: a dump of the key store undoes crypto-shredding for every account \
        deleted after it was taken. The master key is in neither: keep it in your secret store.
        """

    /// Writes a backup of `configuration`'s database (and, with `includeKeys`, its key store) to `path`, which must not
    /// exist. The file appears complete or not at all (written beside it, then renamed).
    public static func create(configuration: ServerConfiguration, to path: String, includeKeys: Bool, logger: Logger, now: Date = Date()) async throws -> Report {
        guard case .sqlite(let databasePath) = configuration.database else { throw BackupError(postgresRecipe) }
        var keystorePath: String?
        if includeKeys {
            guard case .sqlite(let path) = configuration.keystoreLocation else {
                throw BackupError("the key store is on PostgreSQL (FITBASE_KEYSTORE_URL): back it up with pg_dump, and this database with --without-keys")
            }
            keystorePath = path
        }
        guard FileManager.default.fileExists(atPath: databasePath) else { throw BackupError("no database at \(databasePath) (--data-dir / --database-url)") }
        guard !FileManager.default.fileExists(atPath: path) else { throw BackupError("\(path) exists: choose a new file") }

        let work = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(".fitbase-backup-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: work) }

        let dataCopy = work.appendingPathComponent("fitbase.sqlite").path
        let lastMigration = try await snapshot(databasePath, into: dataCopy, readingLastMigration: true, logger: logger)
        var copies = [(name: "fitbase.sqlite", role: "data", path: dataCopy)]
        if let keystorePath {
            guard FileManager.default.fileExists(atPath: keystorePath) else { throw BackupError("no key store at \(keystorePath)") }
            let keysCopy = work.appendingPathComponent("keystore.sqlite").path
            _ = try await snapshot(keystorePath, into: keysCopy, readingLastMigration: false, logger: logger)
            copies.append(("keystore.sqlite", "keystore", keysCopy))
        }

        // Media in the data directory, taken after the database: an object the copy names was written before it (objects
        // are written, then named in a row). One deleted since is missing from the backup, as from the directory.
        if let mediaRoot = localMediaRoot(configuration) {
            for object in try mediaObjects(in: mediaRoot) { copies.append(("media/" + object, "media", mediaRoot + "/" + object)) }
        }
        var manifest = Manifest(createdAt: now, includesKeys: includeKeys, lastMigration: lastMigration, files: [])
        var archived: [(name: String, role: String, path: String)] = []
        for copy in copies {
            let digested: (bytes: UInt64, sha256: String)
            do {
                digested = try digest(of: copy.path)
            } catch where copy.role == "media" && !FileManager.default.fileExists(atPath: copy.path) {
                continue  // deleted while the backup ran
            }
            manifest.files.append(.init(name: copy.name, role: copy.role, bytes: digested.bytes, sha256: digested.sha256))
            archived.append(copy)
        }
        copies = archived
        let partial = path + ".partial"
        let writer = try BackupArchive.Writer(path: partial)
        do {
            try writer.add(name: "manifest.json", data: try encoder.encode(manifest), modified: now)
            for (copy, file) in zip(copies, manifest.files) {
                let written = try writer.add(name: copy.name, copying: copy.path, modified: now)
                guard written.sha256 == file.sha256 else { throw BackupError("\(copy.path) changed while it was archived") }
            }
            try writer.finish()
            try FileManager.default.moveItem(atPath: partial, toPath: path)
        } catch {
            writer.abandon()
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
        return Report(path: path, bytes: try BackupArchive.size(of: path), includesKeys: includeKeys, lastMigration: lastMigration)
    }

    /// The directory of media kept in the data directory (FITBASE_STORAGE_URL unset); `nil` with an S3 store.
    static func localMediaRoot(_ configuration: ServerConfiguration) -> String? {
        guard case .local(let directory) = configuration.media.store else { return nil }
        return URL(fileURLWithPath: directory ?? MediaFeature.defaultDirectory(in: configuration.dataDirectory)).standardizedFileURL.path
    }

    /// The objects under `root` (paths relative to it), uploads still arriving left out.
    static func mediaObjects(in root: String) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var objects: [String] = []
        while let relative = walker.nextObject() as? String {
            if relative == ".incoming" { walker.skipDescendants(); continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            objects.append(relative)
        }
        return objects.sorted()
    }

    /// Where a media entry of the archive goes under `root`; `nil` for a name that would leave it.
    static func mediaTarget(of name: String, under root: String) -> String? {
        guard name.hasPrefix("media/") else { return nil }
        let relative = name.dropFirst("media/".count)
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.isEmpty, segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.hasPrefix(".") }) else { return nil }
        return root + "/" + relative
    }

    /// What a restore put in place.
    public struct RestoreReport: Sendable {
        public let createdAt: Date
        public let includesKeys: Bool
        public let lastMigration: String?
    }

    /// Restores the backup at `path` into `configuration`'s data directory, which must be empty or absent (and so must
    /// the database and key store files it names).
    public static func restore(from path: String, configuration: ServerConfiguration, logger: Logger) async throws -> RestoreReport {
        guard case .sqlite(let databasePath) = configuration.database else {
            throw BackupError("fitbase restore fills an embedded SQLite data directory; on PostgreSQL use pg_restore:\n" + postgresRecipe)
        }
        let directory = configuration.dataDirectory
        if let contents = try? FileManager.default.contentsOfDirectory(atPath: directory), !contents.isEmpty {
            throw BackupError("the data directory \(directory) is not empty: restore into a new or empty one (--data-dir)")
        }
        let reader = try BackupArchive.Reader(path: path)
        guard let first = try reader.next(), first.name == "manifest.json" else { throw BackupError("\(path) is not a FitBase backup (no manifest)") }
        let manifest: Manifest
        do {
            manifest = try decoder.decode(Manifest.self, from: try reader.read(size: first.size))
        } catch let error as BackupError {
            throw error
        } catch {
            throw BackupError("\(path) has a manifest FitBase cannot read: \(error)")
        }
        guard manifest.format == "fitbase-backup", manifest.version == 1, manifest.engine == "sqlite" else {
            throw BackupError("\(path) is a \(manifest.format) version \(manifest.version) backup of \(manifest.engine); this FitBase restores version 1 of sqlite")
        }
        var targets: [String: String] = ["data": databasePath]
        if manifest.includesKeys {
            guard case .sqlite(let keystorePath) = configuration.keystoreLocation else {
                throw BackupError("the backup holds a SQLite key store but FITBASE_KEYSTORE_URL names PostgreSQL: unset it to restore the keys")
            }
            targets["keystore"] = keystorePath
        }
        for target in targets.values where FileManager.default.fileExists(atPath: target) {
            throw BackupError("\(target) exists: restore only creates files, it never replaces them")
        }
        let mediaRoot = localMediaRoot(configuration)
        if manifest.files.contains(where: { $0.role == "media" }) {
            guard let mediaRoot else {
                throw BackupError("the backup holds media files but FITBASE_STORAGE_URL names an S3 store: unset it to restore them into the data directory")
            }
            if let contents = try? FileManager.default.contentsOfDirectory(atPath: mediaRoot), !contents.isEmpty {
                throw BackupError("the media directory \(mediaRoot) is not empty: restore only creates files, it never replaces them")
            }
        }
        try createDataDirectory(directory)

        var extracted: [(partial: String, target: String)] = []
        var restoredRoles: Set<String> = []
        do {
            while let entry = try reader.next() {
                guard let file = manifest.files.first(where: { $0.name == entry.name }) else {
                    try reader.skip(size: entry.size)
                    continue
                }
                let target: String
                if file.role == "media" {
                    guard let mediaRoot, let path = mediaTarget(of: file.name, under: mediaRoot) else {
                        throw BackupError("\(path) names a media file outside the media directory (\(file.name)): the backup is damaged")
                    }
                    target = path
                } else if let path = targets[file.role] {
                    target = path
                } else {
                    try reader.skip(size: entry.size)
                    continue
                }
                try FileManager.default.createDirectory(
                    at: URL(fileURLWithPath: target).deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
                )
                let partial = target + ".restoring"
                extracted.append((partial, target))
                let sha256 = try reader.extract(size: entry.size, to: partial)
                guard entry.size == file.bytes, sha256 == file.sha256 else { throw BackupError("\(entry.name) in \(path) does not match its manifest: the backup is damaged") }
                if file.role != "media" { try await checkIntegrity(of: partial, logger: logger) }
                restoredRoles.insert(file.role)
            }
            let missing = Set(targets.keys).subtracting(restoredRoles)
            guard missing.isEmpty else { throw BackupError("\(path) ends before its \(missing.sorted().joined(separator: " and ")) file: the backup is incomplete") }
            for file in extracted { try FileManager.default.moveItem(atPath: file.partial, toPath: file.target) }
        } catch {
            for file in extracted { try? FileManager.default.removeItem(atPath: file.partial) }
            throw error
        }
        return RestoreReport(createdAt: manifest.createdAt, includesKeys: manifest.includesKeys, lastMigration: manifest.lastMigration)
    }

    /// `VACUUM INTO` from the live database at `source` (the server may be writing to it), on a connection of its own;
    /// returns the last migration the snapshot had applied when asked.
    private static func snapshot(_ source: String, into destination: String, readingLastMigration: Bool, logger: Logger) async throws -> String? {
        let database = try await Database.open(.sqlite(path: source), maxConnectionsPerEventLoop: 1, checkpointsInBackground: false, logger: logger)
        do {
            try await database.withConnection { db in try await db.raw("VACUUM INTO \(bind: destination)").run() }
            try await database.shutdown()
        } catch {
            try? await database.shutdown()
            throw BackupError("copying \(source) failed: \(String(reflecting: error))")
        }
        guard readingLastMigration else { return nil }
        let copy = try await Database.open(.sqlite(path: destination), maxConnectionsPerEventLoop: 1, checkpointsInBackground: false, logger: logger)
        let last: String?
        do {
            last = try await copy.withConnection { db -> String? in
                guard try await Database.tableExists(MigrationRunner.table, on: db, engine: .sqlite) else { return nil }
                return try await db.select().column("name").from(MigrationRunner.table).orderBy("name", .descending).limit(1).first()?
                    .decode(column: "name", as: String.self)
            }
        } catch {
            try? await copy.shutdown()
            throw error
        }
        try await copy.shutdown()
        return last
    }

    /// Fails unless SQLite finds the file sound.
    private static func checkIntegrity(of path: String, logger: Logger) async throws {
        let database = try await Database.open(.sqlite(path: path), maxConnectionsPerEventLoop: 1, checkpointsInBackground: false, logger: logger)
        let verdict: String?
        do {
            verdict = try await database.withConnection { db in try await db.raw("PRAGMA integrity_check").first()?.decode(column: "integrity_check", as: String.self) }
            // Back to a single file: the restored database must not depend on a log left beside its temporary name.
            try await database.withConnection { db in try await db.raw("PRAGMA wal_checkpoint(TRUNCATE)").run() }
            try await database.withConnection { db in try await db.raw("PRAGMA journal_mode = DELETE").run() }
            try await database.shutdown()
        } catch {
            try? await database.shutdown()
            throw BackupError("\(path) is not a sound SQLite database: \(String(reflecting: error))")
        }
        guard verdict == "ok" else { throw BackupError("\(path) failed SQLite's integrity check: \(verdict ?? "no answer")") }
        if let log = try? BackupArchive.size(of: path + "-wal"), log > 0 {
            throw BackupError("\(path) kept a write-ahead log after its check; nothing was restored")
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private static func digest(of path: String) throws -> (UInt64, String) {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var hasher = SHA256()
        var bytes: UInt64 = 0
        while let chunk = try handle.read(upToCount: BackupArchive.chunkSize), !chunk.isEmpty {
            hasher.update(data: chunk)
            bytes += UInt64(chunk.count)
        }
        return (bytes, hasher.finalize().map { String(format: "%02x", $0) }.joined())
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

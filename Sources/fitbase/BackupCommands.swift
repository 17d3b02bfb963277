import ArgumentParser
import FitBaseServer
import Foundation
import Logging

/// `fitbase backup --to FILE [--without-keys]`.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the SQLite database and the health data key store into one file, while the server runs.",
        discussion: """
            The copy is consistent (SQLite's VACUUM INTO: one snapshot, taken while the server goes on serving) and \
            packed with the key store in a tar archive whose manifest records each file's SHA-256 (docs/console-and-ops.md, "Backups"). \
            Restoring the key store undoes the crypto-shredding of accounts deleted after the backup: --without-keys \
            backs up the data alone. The master key is never included. On PostgreSQL this prints the pg_dump recipe.
            """
    )

    @Option(help: "The backup file to write (must not exist).")
    var to: String

    @Flag(help: "Leave the health data key store out (health data in the backup then cannot be decrypted).")
    var withoutKeys = false

    @OptionGroup var options: ServerOptions

    func run() async throws {
        try await administer(options) { configuration in
            if !withoutKeys, case .sqlite = configuration.database {
                FileHandle.standardError.write(Data((DatabaseBackup.keysWarning + "\n").utf8))
            }
            let report = try await DatabaseBackup.create(
                configuration: configuration, to: to, includeKeys: !withoutKeys, logger: Logger(label: "fitbase.backup")
            )
            return """
                Backed up \(configuration.database) \(report.includesKeys ? "and its key store " : "(without the key store) ")to \(report.path) \
                (\(report.bytes) bytes, schema at \(report.lastMigration ?? "no migrations")). Restore it with the same master key.
                """
        }
    }
}

/// `fitbase restore --from FILE`.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup into an empty data directory.",
        discussion: """
            Refuses a data directory that is not empty and never replaces a file. Each file is checked against the \
            backup's manifest and by SQLite's integrity check before it is put in place. Start the server on the \
            restored directory with the master key the backup's data was sealed under.
            """
    )

    @Option(help: "The backup file to read.")
    var from: String

    @OptionGroup var options: ServerOptions

    func run() async throws {
        try await administer(options) { configuration in
            let report = try await DatabaseBackup.restore(from: from, configuration: configuration, logger: Logger(label: "fitbase.restore"))
            var said = """
                Restored the backup of \(report.createdAt.formatted(.iso8601)) into \(configuration.dataDirectory) \
                (schema at \(report.lastMigration ?? "no migrations")).
                """
            said += report.includesKeys
                ? " The health data key store was restored: accounts deleted since the backup have their keys back."
                : " The backup had no key store: health data in it cannot be decrypted."
            said += " Start the server with the master key the data was sealed under (FITBASE_MASTER_KEY, or the old data directory's master.key copied in)."
            return said
        }
    }
}

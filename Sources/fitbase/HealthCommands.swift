import ArgumentParser
import FitBaseServer
import Foundation
import Logging

/// `fitbase keys …`: the master key that seals stored secrets, and the keys that sign access tokens.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the master key and the access-token signing keys.", subcommands: [Rotate.self, RotateSigning.self]
    )

    /// `fitbase keys rotate --new-key-file PATH`.
    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-wrap every health data key (and stored Apple token and signing key) under a new master key.",
            discussion: """
                Reads the current master key as `serve` does (FITBASE_MASTER_KEY, else FITBASE_MASTER_KEY_FILE, else \
                <data dir>/master.key) and the new one from --new-key-file, creating that file (0600) with a random key \
                if it does not exist, and records the new key as the database's. Samples are not rewritten. Stop the \
                servers first, then start every one of them with the new key (point FITBASE_MASTER_KEY_FILE at the new \
                file, or move it over master.key); a server started with the old one refuses to start.
                """
        )

        @Option(help: "File holding the new 32-byte master key (created if missing).")
        var newKeyFile: String

        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administer(options) { configuration in
                let rotation = try await HealthAdministration(configuration: configuration, logger: Logger(label: "fitbase.keys"), clock: .system)
                    .rotateMasterKey(to: newKeyFile)
                return "\(rotation). Start the server with the new key."
            }
        }
    }

    /// `fitbase keys rotate-signing`.
    struct RotateSigning: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-signing",
            abstract: "Make a new access-token signing key current for every instance; nobody is signed out.",
            discussion: """
                The key that was current becomes previous: it still verifies the tokens it signed and stays in \
                /.well-known/jwks.json. Previous keys that stopped being current an hour or more ago are retired \
                (access tokens last 15 minutes). Running servers sign with the new key within a minute; they need not \
                be stopped. Needs the master key `serve` uses.
                """
        )

        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administer(options) { configuration in
                let rotation = try await SigningKeyAdministration(configuration: configuration, logger: Logger(label: "fitbase.keys"))
                    .rotateSigningKey(now: ServerClock.system.now)
                return "\(rotation)."
            }
        }
    }
}

/// `fitbase audit …`: the hash-chained audit log of health data.
struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check the health data audit log.", subcommands: [Verify.self, Checkpoint.self])

    /// `fitbase audit verify`.
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Walk every audit chain, check its signed digests and checkpoints, and report the first broken link.",
            discussion: """
                Checks the newest checkpoint in audit_checkpoints, the one in --checkpoint, and the newest in the sink \
                (--checkpoint-url, else FITBASE_AUDIT_CHECKPOINT_URL): every chain a checkpoint names must still hold \
                its head. Warns on standard error when audit_checkpoints lacks checkpoints the sink holds, or when \
                audit entries were written more than two checkpoint periods (FITBASE_AUDIT_CHECKPOINT_SECONDS) after \
                the newest checkpoint. Exit status: 0 intact, 1 broken, 2 could not verify, 3 intact but checkpoints \
                missing or stale (deleted rows, a restore from an older backup, or checkpoints no longer written).
                """
        )

        @Option(help: "A checkpoint written by `fitbase audit checkpoint --out`: every chain it names must still hold its head.")
        var checkpoint: String?

        @Option(help: "The checkpoint sink to check against: file:///dir, a directory, or s3://bucket/prefix?… [env: FITBASE_AUDIT_CHECKPOINT_URL]")
        var checkpointURL: String?

        @OptionGroup var options: ServerOptions

        func run() async throws {
            let configuration = try options.resolve()
            bootstrapLogging(level: configuration.logLevel)
            do {
                let verdict = try await HealthAdministration(configuration: configuration, logger: Logger(label: "fitbase.audit"), clock: .system)
                    .verifyAuditChain(checkpointFile: checkpoint, checkpointURL: checkpointURL)
                for warning in verdict.warnings {
                    FileHandle.standardError.write(Data("fitbase: WARNING: \(warning)\n".utf8))
                }
                if let broken = verdict.firstBreak {
                    print("audit chain BROKEN after \(verdict.entries) good entries: \(broken)")
                    throw ExitCode.failure
                }
                print(
                    "audit chain intact: \(verdict.entries) entries in \(verdict.chains) chains; \(verdict.digests) signed digests hold; "
                        + "\(verdict.unsigned) entries after their chain's last digest checked by hash only; "
                        + "\(verdict.checkpoints) checkpoint\(verdict.checkpoints == 1 ? "" : "s") hold"
                        + (verdict.warnings.isEmpty ? "" : "; but \(verdict.warnings.count) checkpoint warning(s), see above")
                )
                if !verdict.warnings.isEmpty { throw ExitCode(3) }
            } catch let exit as ExitCode {
                throw exit
            } catch {
                FileHandle.standardError.write(Data("fitbase: \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
    }

    /// `fitbase audit checkpoint --out FILE`.
    struct Checkpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign a checkpoint of every audit chain's head and write it to a file.",
            discussion: """
                Keep the file where the database's administrator cannot rewrite it (write-once object storage, another \
                account's bucket): `fitbase audit verify --checkpoint FILE` then finds a chain cut back, rewound or \
                deleted since, which the database alone cannot show. The checkpoint also goes to audit_checkpoints and \
                to FITBASE_AUDIT_CHECKPOINT_URL when set (servers write one there every period by themselves). Needs \
                the master key `serve` uses.
                """
        )

        @Option(help: "Where to write the checkpoint (JSON).")
        var out: String

        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administer(options) { configuration in
                let chains = try await HealthAdministration(configuration: configuration, logger: Logger(label: "fitbase.audit"), clock: .system).writeAuditCheckpoint(to: out)
                return "checkpoint of \(chains) audit chains written to \(out)"
            }
        }
    }
}

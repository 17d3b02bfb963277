import ArgumentParser
import FitBaseCore
import FitBaseServer
import Foundation
import Logging

/// `fitbase config …`: remote config flags, their rollouts and testers' overrides. Every change names the administrator
/// making it (`--by`) and is recorded in the operator audit trail (`fitbase admin audit`).
struct Config: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage remote config flags (GET /v1/config): values, staged rollouts, conditions, testers.",
        subcommands: [SetFlag.self, RolloutFlag.self, ListFlags.self, DeleteFlag.self]
    )

    /// The administrator a change is recorded as.
    struct Editor: ParsableArguments {
        @Option(help: "The e-mail of the administrator making the change (recorded in the operator audit trail).")
        var by: String
    }

    /// `fitbase config set KEY VALUE [--default D] [--rollout P] [--tiers …] [--app-versions …] [--platforms …] [--locales …]`,
    /// or `fitbase config set KEY VALUE --for EMAIL` (a tester's own value).
    struct SetFlag: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Create or change a flag: the value its audience gets, the default everyone else gets, and who the audience is.",
            discussion: """
                A new flag's kind is read from its value (true/false, a number, a JSON object or array, else a string) unless \
                --kind says; its default is false, 0, "" or {}; its rollout 100 % of the users its conditions admit. \
                Options left out keep their current setting; an empty list clears a condition (--tiers ""). \
                With --for, the value is that account's override (a tester); --remove drops it.
                """
        )

        @Argument(help: "The flag's key: 1–64 of a-z, 0-9, _, . and -, starting with a letter.")
        var key: String

        @Argument(help: "The value (the audience's, or the tester's with --for).")
        var value: String?

        @Option(help: "bool, number, string or json.")
        var kind: String?

        @Option(name: .customLong("default"), help: "The value everyone outside the audience gets (and anonymous callers).")
        var defaultValue: String?

        @Option(help: "The share of admitted users in the audience, 0–100 (two decimals at most).")
        var rollout: String?

        @Option(help: "Only these tiers (free, pro, premium), comma-separated.")
        var tiers: String?

        @Option(help: "Only app versions in this range: \">=1.4.0 <2.0.0\", \"^1.4\", \"~1.4.2\".")
        var appVersions: String?

        @Option(help: "Only these platforms (ios, ipados, macos, watchos, visionos, android, web), comma-separated.")
        var platforms: String?

        @Option(help: "Only these locales or their regions (de, pt-BR), comma-separated.")
        var locales: String?

        @Option(help: "What the flag is for (operators only; never sent to apps).")
        var summary: String?

        @Flag(
            name: .customLong("public"), inversion: .prefixedNo,
            help: "Whether apps that are not signed in get the flag (its default); a new flag: not.")
        var isPublic: Bool?

        @Option(name: .customLong("for"), help: "Set this account's own value instead (a tester).")
        var tester: String?

        @Flag(help: "With --for: remove the account's own value.")
        var remove = false

        @OptionGroup var editor: Editor
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administerConfig(options) { administration in
                let editor = try await administration.editor(email: self.editor.by)
                if let tester {
                    guard remove || value != nil else { throw AdministrationError("give the tester's value, or --remove") }
                    try await administration.override(key, email: tester, value: remove ? nil : value, by: editor)
                    return remove ? "\(tester.lowercased()) gets \(key) like everyone else again." : "\(tester.lowercased()) gets \(key) = \(value ?? "")."
                }
                guard !remove else { throw AdministrationError("--remove goes with --for") }
                let change = ConfigFlagChange(
                    kind: kind, value: value, defaultValue: defaultValue, rolloutPercent: rollout, tiers: tiers, appVersions: appVersions,
                    platforms: platforms, locales: locales, summary: summary, isPublic: isPublic
                )
                let flag = try await administration.set(key, change, by: editor)
                return "\(flag.key): \(RemoteConfigAdministration.describe(flag))"
            }
        }
    }

    /// `fitbase config rollout KEY PERCENT`.
    struct RolloutFlag: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rollout",
            abstract: "Set the share of admitted users who get a flag's value; a user inside stays inside as it grows."
        )

        @Argument(help: "The flag's key.")
        var key: String

        @Argument(help: "0–100, two decimals at most (12.5).")
        var percent: String

        @OptionGroup var editor: Editor
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administerConfig(options) { administration in
                let flag = try await administration.rollout(key, percent: percent, by: try await administration.editor(email: editor.by))
                return "\(flag.key): \(RemoteConfigAdministration.describe(flag))"
            }
        }
    }

    /// `fitbase config list`.
    struct ListFlags: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the flags: key, kind, values, rollout, conditions, last change.")

        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administerConfig(options) { administration in
                let flags = try await administration.list()
                guard !flags.isEmpty else { return "No flags." }
                return flags.map { entry in
                    [entry.flag.key, RemoteConfigAdministration.describe(entry.flag), entry.changedAt?.formatted(.iso8601) ?? "", entry.changedBy?.description ?? ""]
                        .joined(separator: "\t")
                }.joined(separator: "\n")
            }
        }
    }

    /// `fitbase config delete KEY`.
    struct DeleteFlag: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a flag; apps fall back to their in-app defaults.")

        @Argument(help: "The flag's key.")
        var key: String

        @OptionGroup var editor: Editor
        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administerConfig(options) { administration in
                try await administration.delete(key, by: try await administration.editor(email: editor.by))
                return "\(key) deleted."
            }
        }
    }
}

/// Opens the database, migrated, and runs `command` with the remote config administration; a refused change is said in
/// one line naming each field at fault.
private func administerConfig(_ options: ServerOptions, _ command: (RemoteConfigAdministration) async throws -> String) async throws {
    try await administerDatabase(options) { database in
        try await MigrationRunner.forServer(database: database, logger: Logger(label: "fitbase.config")).run()
        do {
            return try await command(RemoteConfigAdministration(database: database, clock: .system))
        } catch let invalid as InvalidFields {
            throw AdministrationError(invalid.errors.map { "\($0.field) \($0.message)" }.joined(separator: "; "))
        }
    }
}

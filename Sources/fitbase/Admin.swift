import ArgumentParser
import FitBaseServer
import Foundation
import Logging

/// `fitbase admin …`: administration of accounts from the server's shell.
struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administer accounts, and read what administrators did.",
        subcommands: [GrantRole.self, GrantTier.self, Audit.self]
    )

    /// `fitbase admin grant-role EMAIL ROLE`.
    struct GrantRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grant-role",
            abstract: "Give the account with this e-mail a role (user or admin). It applies to the account's next request."
        )

        @Argument(help: "The account's e-mail address.")
        var email: String

        @Argument(help: "user or admin.")
        var role: String

        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administerAccounts(options) { administration in
                try await administration.grantRole(role, toEmail: email)
                return "\(email.lowercased()) now has the role \(role.lowercased())."
            }
        }
    }

    /// `fitbase admin grant-tier EMAIL TIER [--days N]`.
    struct GrantTier: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grant-tier",
            abstract: "Grant the account with this e-mail a tier (pro or premium) as a promotional subscription."
        )

        @Argument(help: "The account's e-mail address.")
        var email: String

        @Argument(help: "pro or premium.")
        var tier: String

        @Option(help: "How many days the grant lasts; without it the grant does not end.")
        var days: Int?

        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administerAccounts(options) { administration in
                let ends = try await administration.grantTier(tier, toEmail: email, days: days)
                return "\(email.lowercased()) has \(tier.lowercased()) " + (ends.map { "until \($0.formatted(.iso8601))." } ?? "without end.")
            }
        }
    }
}

extension Admin {
    /// `fitbase admin audit [--limit N] [--target ID]`: the operator audit trail, newest first.
    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List what administrators did in the console (who, when, what, to what), newest first."
        )

        @Option(help: "How many entries to list (1–10000).")
        var limit = 50

        @Option(help: "Only the entries about this target (a user, workout, group or outbox id).")
        var target: String?

        @OptionGroup var options: ServerOptions

        func run() async throws {
            try await administerDatabase(options) { database in
                guard (1...10_000).contains(limit) else { throw AdministrationError("--limit must be 1–10000") }
                try await MigrationRunner.forServer(database: database, logger: Logger(label: "fitbase.admin")).run()
                let entries = try await OperatorAuditTrail.recent(limit: limit, target: target?.lowercased(), in: database)
                guard !entries.isEmpty else { return "No operator actions recorded." }
                return entries.map { entry in
                    [
                        entry.at.formatted(.iso8601), entry.adminLabel, entry.action,
                        "\(entry.targetKind) \(entry.targetID)", entry.detail ?? "",
                    ].joined(separator: "\t")
                }.joined(separator: "\n")
            }
        }
    }
}

/// Opens the configured database, runs `command` with the account administration and closes the database
/// (``administerDatabase(_:_:)``).
private func administerAccounts(_ options: ServerOptions, _ command: (AccountAdministration) async throws -> String) async throws {
    try await administerDatabase(options) { database in try await command(AccountAdministration(database: database, clock: .system)) }
}

/// Opens the configured database, runs `command` and closes the database; prints what it says, or a refusal as one
/// line on standard error and exit status 1 (``administer(_:_:)``).
func administerDatabase(_ options: ServerOptions, _ command: (Database) async throws -> String) async throws {
    try await administer(options) { configuration in
        let database: Database
        do {
            database = try await Database.open(configuration.database, logger: Logger(label: "fitbase.admin"))
        } catch {
            exitWithStartupError(error)
        }
        do {
            let said = try await command(database)
            try? await database.shutdown()
            return said
        } catch {
            try? await database.shutdown()
            throw error
        }
    }
}

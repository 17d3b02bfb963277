import ArgumentParser
import FitBaseServer
import Foundation
import Logging

/// `fitbase admin …`: administration of accounts from the server's shell.
struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administer accounts.",
        subcommands: [GrantRole.self]
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
            let configuration = try options.resolve()
            bootstrapLogging(level: configuration.logLevel)
            let database: Database
            do {
                database = try await Database.open(configuration.database, logger: Logger(label: "fitbase.admin"))
            } catch {
                exitWithStartupError(error)
            }
            do {
                try await AccountAdministration(database: database).grantRole(role, toEmail: email)
                try? await database.shutdown()
                print("\(email.lowercased()) now has the role \(role.lowercased()).")
            } catch {
                try? await database.shutdown()
                FileHandle.standardError.write(Data("fitbase: \(error)\n".utf8))
                throw ExitCode.failure
            }
        }
    }
}

import FitBaseCore
import Foundation

/// Account administration for the command line (`fitbase admin`).
public struct AccountAdministration: Sendable {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Gives the account with `email` the role named `roleName`.
    public func grantRole(_ roleName: String, toEmail email: String) async throws {
        guard let role = Role(rawValue: roleName.lowercased()) else {
            throw AdministrationError("unknown role \"\(roleName)\"; expected one of \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let address = EmailAddress(email) else { throw AdministrationError("\"\(email)\" is not an e-mail address") }
        let users = UserStore(database: database)
        guard let user = try await users.find(email: address) else { throw AdministrationError("no account has the e-mail \(address)") }
        try await users.setRole(role, for: user.id)
    }
}

/// A refused administration command, said in one line.
public struct AdministrationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

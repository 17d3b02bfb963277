import FitBaseClient
import FitBaseCore
import FitBaseKit
import Foundation

extension Journey {
    /// Seed 004's social beta: an operator turns `social_beta` on for 10 % of users with `fitbase config` (audited as
    /// them); a user inside the rollout sees the Groups tab on their phone, a user outside does not. Needs the server's
    /// CLI and data directory (`FITBASE_JOURNEY_CLI`, `FITBASE_JOURNEY_DATA_DIR`, set by scripts/ci/journey.sh).
    static func socialBetaRollout(server: URL) async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let cli = environment["FITBASE_JOURNEY_CLI"], let dataDirectory = environment["FITBASE_JOURNEY_DATA_DIR"] else {
            step("social beta rollout skipped: FITBASE_JOURNEY_CLI and FITBASE_JOURNEY_DATA_DIR are not set")
            return
        }
        let operatorEmail = "journey-ops-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        try await FitBaseClient(serverURL: server).signUp(email: operatorEmail, password: password)
        try runCLI(cli, ["admin", "grant-role", operatorEmail, "admin", "--data-dir", dataDirectory])
        try runCLI(cli, ["config", "set", "social_beta", "true", "--default", "false", "--rollout", "10", "--by", operatorEmail, "--data-dir", dataDirectory])

        // Accounts until one is inside the 10 % and one outside (by the rollout's own stable bucket).
        var inside: String?
        var outside: String?
        for index in 0..<200 where inside == nil || outside == nil {
            let email = "journey-beta\(index)-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let client = FitBaseClient(serverURL: server)
            let user = try await client.signUp(email: email, password: password)
            if RemoteConfigRules.isInRollout(key: "social_beta", user: user.id, basisPoints: 1_000) { inside = inside ?? email } else { outside = outside ?? email }
        }
        for (email, shows) in [(try require(inside, "an account inside 10 %"), true), (try require(outside, "an account outside 10 %"), false)] {
            let phone = try Phone(name: shows ? "Beta-in" : "Beta-out", server: server)
            defer { try? FileManager.default.removeItem(at: phone.directory) }
            await phone.app.start()
            phone.app.auth.email = email
            phone.app.auth.password = password
            await phone.app.auth.signIn()
            try await until("\(email) is signed in") { phone.app.auth.isSignedIn }
            // SQLite: the server sees the CLI's change within a second.
            try await until("\(email) \(shows ? "sees" : "does not see") the Groups tab") {
                await phone.app.refreshConfig()
                return phone.app.showsGroupsTab == shows
            }
            phone.app.stop()
        }
        step("social_beta at 10 %: a user inside sees the Groups tab, a user outside does not")
    }

    /// Runs the `fitbase` CLI with `arguments`; fails the journey with its error output when it fails.
    static func runCLI(_ cli: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: cli)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try check(process.terminationStatus == 0, "fitbase \(arguments.prefix(2).joined(separator: " ")) failed: \(said)")
    }
}

extension Journey {
    /// Ana's phone timed its leaderboard fetches and sync rounds and reported the offline leaderboard as an error; once
    /// flushed the server has them all (scripts/ci/journey.sh then finds them on the console's Reports page).
    static func reportsAreSent(_ phone: Phone) async throws {
        let reporter = try require(phone.dependencies.reports as? FitBaseReporter, "the live reporter")
        await reporter.flush()
        try check(reporter.pending.isEmpty, "the app's reports reached the server (\(reporter.pending.count) left)")
        step("\(phone.name)'s app sent its reports: the offline leaderboard error, leaderboard fetch and sync round timings")
    }
}

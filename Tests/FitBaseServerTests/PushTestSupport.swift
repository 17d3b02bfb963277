import FitBaseTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// Runs `test` against the real application sending pushes to `provider`, with a second handle on its database for
/// looking at rows (and for running a second worker or scheduler, as another instance would). The application runs on
/// `clock` (a ``MovableClock`` the test moves); its own reminder scheduler does not run, so only the test's schedulers
/// send reminders, at the instants they are given.
func withPushApp(
    _ engine: DatabaseEngine, provider: RecordingPushProvider, demoCatalog: Bool = false, clock: ServerClock = .system,
    _ test: @escaping @Sendable (any TestClientProtocol, Database, ReminderScheduler) async throws -> Void
) async throws {
    let options = TestAppOptions(
        demoCatalog: demoCatalog, pushProvider: provider, clock: clock, configure: { $0.reminderInterval = nil }
    )
    try await withApp(engine, options: options) { client, app in
        let configuration = app.configuration
        let database = try await Database.open(configuration.database, logger: TestDatabase.logger)
        let keystore = configuration.keystoreLocation == configuration.database
            ? nil : try await Database.open(configuration.keystoreLocation, logger: TestDatabase.logger)
        do {
            // A second instance's scheduler: its own pools on the same database (and key store, for cycle predictions).
            let vault = HealthVault(keys: HealthKeyStore(database: keystore ?? database, clock: .system), masterKey: app.foundation.masterKey)
            let profiles = ProfileStore(database: database, vault: vault)
            let scheduler = ReminderScheduler(
                database: database, cycle: CycleReckoner(store: CycleStore(database: database, vault: vault), signals: CycleSignalStore(database: database, vault: vault), profiles: profiles),
                claimKey: app.foundation.masterKey.derivedKey(for: "push reminder claims")
            )
            try await test(client, database, scheduler)
            try await database.shutdown()
            try await keystore?.shutdown()
        } catch {
            try? await database.shutdown()
            try? await keystore?.shutdown()
            throw error
        }
    }
}

/// A fresh random APNs-shaped token (32 bytes as 64 hex digits).
func deviceToken() -> String {
    (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
}

extension TestClientProtocol {
    /// Registers `token` for `account`'s session.
    @discardableResult
    func registerDevice(_ token: String, for account: TestAccount, timeZone: String? = nil, environment: String = "sandbox") async throws -> TestResponse {
        var body: [String: Any] = ["platform": "ios", "environment": environment, "bundleId": "com.example.fit", "locale": "en-US", "appVersion": "1.0 (1)"]
        if let timeZone { body["timeZone"] = timeZone }
        return try await json(.put, "/v1/me/devices/\(token)", body: body, token: account.accessToken)
    }

    /// Turns notifications on (and sets whatever else is given) on `account`'s profile.
    func enableNotifications(_ account: TestAccount, _ extra: [String: Any] = [:]) async throws {
        var body: [String: Any] = ["notificationsEnabled": true]
        body.merge(extra) { $1 }
        let response = try await json(.patch, "/v1/me", body: body, token: account.accessToken)
        try #require(response.status == .ok, "PATCH /v1/me answered \(response.status): \(String(buffer: response.body))")
    }
}

extension Database {
    /// The outbox's push jobs to `token`: status, attempts, next attempt, last error.
    func pushJobs(to token: String) async throws -> [(status: String, attempts: Int, nextAttemptAt: Date, lastError: String?)] {
        try await withConnection { db in
            try await db.select().columns("status", "attempts", "next_attempt_at", "last_error").from("outbox")
                .where("kind", .equal, "push").where("device_token", .equal, token).all()
                .map {
                    (
                        try $0.decode(column: "status", as: String.self), try $0.decode(column: "attempts", as: Int.self),
                        try $0.decode(column: "next_attempt_at", as: Date.self), try $0.decode(column: "last_error", as: String?.self)
                    )
                }
        }
    }

    /// Whether `devices` has `token`.
    func hasDevice(_ token: String) async throws -> Bool {
        try await withConnection { db in try await db.select().column("token").from("devices").where("token", .equal, token).first() != nil }
    }
}

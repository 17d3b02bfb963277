import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// A row of `devices`: one app install's APNs token, the account and session it belongs to, and what the app said of
/// itself when it registered.
struct DeviceRecord: Sendable, Equatable {
    var token: String
    var user: UserID
    var session: SessionID
    var platform: String
    var environment: PushEnvironment
    var bundleID: String
    var locale: String?
    var timeZone: String?
    var appVersion: String?
    var createdAt: Date
    var registeredAt: Date
}

/// What the app sends with `PUT /v1/me/devices/{deviceToken}`, checked.
struct DeviceRegistration: Sendable, Equatable {
    var platform: String
    var environment: PushEnvironment
    var bundleID: String
    var locale: String?
    var timeZone: String?
    var appVersion: String?
    /// The random id the app keeps for its install (the SDK's, in the Keychain): the proof a token that is another
    /// account's comes from the same install. Stored as SHA-256.
    var installID: String?

    /// What is stored of ``installID``.
    var installHash: String? { installID.map { sha256Hex("device-install:\($0)") } }
}

/// SQL for `devices`. A device belongs to the session that registered it: the session's end removes it (see
/// ``SessionStore/ended(_:now:on:)``), and with it the pushes still queued for it.
struct DeviceStore: Sendable {
    /// Devices one account may have; registering one more drops the one registered longest ago (an app reinstalled
    /// without signing out leaves its old token behind, and the newest registration is the one in use).
    static let maximumPerAccount = 20

    let database: Database

    /// Registers `token` for `user` and `session`, and returns the device as stored with whether it is new to the
    /// account (including a token that moves here from another account) rather than a refreshed registration.
    ///
    /// One upsert decides concurrent registrations of a token (the database locks the row; none fails on the token's
    /// uniqueness, the last one wins): `created_at` restarts when the token changes account, so it equals
    /// `registered_at` exactly when the registration is new to the account. The pushes still queued for the token
    /// under another account are dropped with it.
    ///
    /// A token another account holds moves here only when the registration carries the install id it was registered
    /// with (or the other registration carried none: an app from before install ids); otherwise 409 `id_taken`, and
    /// nothing changes. Anyone who learns a device's token could otherwise take the device's pushes from its owner.
    func register(
        _ token: String, _ registration: DeviceRegistration, user: UserID, session: SessionID, now: Date
    ) async throws -> (device: DeviceRecord, created: Bool) {
        try await database.transaction { db in
            let device = try await db.insert(into: "devices")
                .columns(Self.insertedColumns)
                .values(
                    SQLBind(token), SQLBind(user.rawValue), SQLBind(session.rawValue), SQLBind(registration.platform),
                    SQLBind(registration.environment.rawValue), SQLBind(registration.bundleID), SQLBind(registration.locale),
                    SQLBind(registration.timeZone), SQLBind(registration.appVersion), SQLBind(now), SQLBind(now), SQLBind(registration.installHash)
                )
                .onConflict(with: ["token"]) { conflict in
                    ["user_id", "session_id", "platform", "environment", "bundle_id", "locale", "time_zone", "app_version", "registered_at"]
                        .reduce(conflict) { $0.set(excludedValueOf: $1) }
                        .set("created_at", to: SQLRaw(#"CASE WHEN "devices"."user_id" = excluded."user_id" THEN "devices"."created_at" ELSE excluded."created_at" END"#))
                        .set("install_hash", to: SQLRaw(#"COALESCE(excluded."install_hash", "devices"."install_hash")"#))
                        .where(SQLRaw(#""devices"."user_id" = excluded."user_id" OR "devices"."install_hash" IS NULL OR "devices"."install_hash" = excluded."install_hash""#))
                }
                .returning(Self.columns.map { SQLColumn($0) })
                .first().map(Self.record)
            guard let device else {
                // The row is there and was not updated: another account's, registered from another install.
                throw RecordIDTaken(
                    field: "installId",
                    detail: "This device token is registered to another account by another install of the app; register it from the install that holds it.",
                    message: "is not the install this token was registered from"
                )
            }
            try await Self.cancelPushes(to: [token], except: user, on: db)
            let created = device.createdAt == device.registeredAt
            if created {
                let surplus = try await db.select().column("token").from("devices").where("user_id", .equal, user.rawValue)
                    .orderBy("registered_at", .descending).orderBy("token").all()
                    .dropFirst(Self.maximumPerAccount).map { try $0.decode(column: "token", as: String.self) }
                try await Self.remove(tokens: surplus, on: db)
            }
            return (device, created)
        }
    }

    /// Removes `token` if it is one of `user`'s devices; whether it was.
    func unregister(_ token: String, of user: UserID) async throws -> Bool {
        try await database.transaction { db in
            let mine = try await db.select().column("token").from("devices").where("token", .equal, token)
                .where("user_id", .equal, user.rawValue).first() != nil
            if mine { try await Self.remove(tokens: [token], on: db) }
            return mine
        }
    }

    /// The account's devices, most recently registered first.
    func devices(of user: UserID) async throws -> [DeviceRecord] {
        try await database.withConnection { db in try await Self.devices(of: [user], on: db) }
    }

    static let columns = [
        "token", "user_id", "session_id", "platform", "environment", "bundle_id", "locale", "time_zone", "app_version", "created_at", "registered_at",
    ]
    /// What an insert writes: the columns read back, and the install's hash (never read back).
    static let insertedColumns = columns + ["install_hash"]

    /// The devices of `users`, most recently registered first.
    static func devices(of users: [UserID], on db: any SQLDatabase) async throws -> [DeviceRecord] {
        guard !users.isEmpty else { return [] }
        return try await db.select().columns(columns).from("devices").where("user_id", .in, users.map(\.rawValue))
            .orderBy("registered_at", .descending).orderBy("token").all().map(record)
    }

    static func record(_ row: any SQLRow) throws -> DeviceRecord {
        DeviceRecord(
            token: try row.decode(column: "token", as: String.self),
            user: UserID(rawValue: try row.decode(column: "user_id", as: UUID.self)),
            session: SessionID(rawValue: try row.decode(column: "session_id", as: UUID.self)),
            platform: try row.decode(column: "platform", as: String.self),
            environment: PushEnvironment(rawValue: try row.decode(column: "environment", as: String.self)) ?? .production,
            bundleID: try row.decode(column: "bundle_id", as: String.self),
            locale: try row.decode(column: "locale", as: String?.self),
            timeZone: try row.decode(column: "time_zone", as: String?.self),
            appVersion: try row.decode(column: "app_version", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Date.self),
            registeredAt: try row.decode(column: "registered_at", as: Date.self)
        )
    }

    /// Removes the devices `sessions` registered, in the transaction that ends them.
    static func sessionsEnded(_ sessions: [SessionID], on db: any SQLDatabase) async throws {
        guard !sessions.isEmpty else { return }
        let tokens = try await db.select().column("token").from("devices").where("session_id", .in, sessions.map(\.rawValue)).all()
            .map { try $0.decode(column: "token", as: String.self) }
        try await remove(tokens: tokens, on: db)
    }

    /// Apple says `token` no longer works (as of `since`): removes the device unless it was registered again after
    /// that — the app may have registered the same token anew while the push was on its way. Whether it was removed.
    @discardableResult
    static func gone(_ token: String, since: Date, on db: any SQLDatabase) async throws -> Bool {
        let removed = try await db.delete(from: "devices").where("token", .equal, token).where("registered_at", .lessThanOrEqual, since)
            .returning("token").all()
        guard !removed.isEmpty else { return false }
        try await cancelPushes(to: [token], on: db)
        return true
    }

    /// Removes devices and the pushes still queued for them.
    static func remove(tokens: [String], on db: any SQLDatabase) async throws {
        guard !tokens.isEmpty else { return }
        try await db.delete(from: "devices").where("token", .in, tokens).run()
        try await cancelPushes(to: tokens, on: db)
    }

    /// Drops the pushes still queued for `tokens` (but those to `user`, when given).
    private static func cancelPushes(to tokens: [String], except user: UserID? = nil, on db: any SQLDatabase) async throws {
        var delete = db.delete(from: "outbox").where("kind", .equal, PushQueue.kind).where("status", .equal, OutboxStatus.pending.rawValue)
            .where("device_token", .in, tokens)
        if let user { delete = delete.where("user_id", .notEqual, user.rawValue) }
        try await delete.run()
    }
}

/// The account's devices in the export (without their tokens, which are Apple's addresses for the phone, not the
/// user's data) and the pushes queued for them; both go with the account.
struct DevicesOwner: InMemoryAccountDataOwner {
    let section = "devices"

    func export(_ user: UserID, on db: any SQLDatabase) async throws -> OpenAPIValueContainer {
        return try await .exportList(DeviceStore.devices(of: [user], on: db)) { device in
            [
                "platform": device.platform, "environment": device.environment.rawValue, "bundleId": device.bundleID,
                "locale": device.locale, "timeZone": device.timeZone, "appVersion": device.appVersion,
                "createdAt": device.createdAt.formatted(.iso8601), "registeredAt": device.registeredAt.formatted(.iso8601),
            ]
        }
    }

    func delete(_ user: UserID, now: Date, on db: any SQLDatabase) async throws {
        try await db.delete(from: "outbox").where("user_id", .equal, user.rawValue).where("kind", .equal, PushQueue.kind).run()
        try await db.delete(from: "devices").where("user_id", .equal, user.rawValue).run()
        try await db.delete(from: "push_reminder_claims").where("user_id", .equal, user.rawValue).run()
    }
}

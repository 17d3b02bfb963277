import SQLKit

/// `user_profiles.notification_preferences`: the per-type push switches and quiet hours, a JSON document (`NULL` =
/// the defaults of ``NotificationPreferences``).
struct AddNotificationPreferences: Migration {
    let name = "2026-11-24.push.add-notification-preferences"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "user_profiles").column("notification_preferences", type: .text).run()
    }
}

/// The device registry, the outbox's per-device push jobs, and the reminders already sent.
///
/// `devices`: one row per APNs token (a token is one app install on one phone, so it belongs to one account at a
/// time), owned by the session that registered it. `outbox.device_token` names the device a `push` job goes to, so
/// the device's removal cancels its pending pushes. `push_reminders`: one row per (user, reminder kind, local day),
/// inserted by whichever instance's scheduler gets there first, so a reminder goes out once.
struct CreatePushDelivery: Migration {
    let name = "2026-11-24.push.create-devices"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "devices")
            .column("token", type: .text, .primaryKey(autoIncrement: false))  // lower-case hex
            .ownerColumn(engine)
            .column("session_id", type: engine.uuid, .notNull)  // no foreign key: the session's end deletes the row
            .column("platform", type: .text, .notNull)  // ios
            .column("environment", type: .text, .notNull)  // sandbox | production
            .column("bundle_id", type: .text, .notNull)
            .column("locale", type: .text)
            .column("time_zone", type: .text)
            .column("app_version", type: .text)
            .column("created_at", type: engine.instant, .notNull)
            .column("registered_at", type: engine.instant, .notNull)  // the latest registration (PUT)
            .run()
        try await database.create(index: "devices_user").on("devices").column("user_id").column("registered_at").run()
        try await database.create(index: "devices_session").on("devices").column("session_id").run()
        try await database.alter(table: "outbox").column("device_token", type: .text).run()
        try await database.create(index: "outbox_kind_due").on("outbox").column("kind").column("status").column("next_attempt_at").run()
        try await database.create(index: "outbox_device").on("outbox").column("device_token").run()
        try await database.create(table: "push_reminders")
            .ownerColumn(engine)
            .column("kind", type: .text, .notNull)  // workout | period
            .column("local_date", type: .text, .notNull)  // YYYY-MM-DD in the user's time zone
            .column("sent_at", type: engine.instant, .notNull)
            .primaryKey("user_id", "kind", "local_date")
            .run()
    }
}

/// `devices.install_hash`: SHA-256 of the install id the app registered a token with, the proof a token that belongs
/// to another account may move (see ``DeviceStore/register(_:_:user:session:now:)``).
struct AddDeviceInstallHash: Migration {
    let name = "2026-11-25.push.add-device-install-hash"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.alter(table: "devices").column("install_hash", type: .text).run()
    }
}

/// `push_reminder_claims` replaces `push_reminders`: a sent reminder is claimed by an HMAC of (user, kind, local day)
/// instead of those values in clear (a row no longer says that someone's period was expected that day). The claims of
/// the last days are not carried over: a reminder already sent today may go once more on the day of the upgrade.
struct KeyReminderClaims: Migration {
    let name = "2026-11-25.push.key-reminder-claims"

    func prepare(on database: any SQLDatabase, engine: DatabaseEngine) async throws {
        try await database.create(table: "push_reminder_claims")
            .column("claim", type: .text, .primaryKey(autoIncrement: false))
            .ownerColumn(engine)
            .column("sent_at", type: engine.instant, .notNull)
            .run()
        try await database.create(index: "push_reminder_claims_user").on("push_reminder_claims").column("user_id").run()
        try await database.drop(table: "push_reminders").run()
    }
}

import FitBaseCore
import Foundation
import SQLKit

/// Who changed the remote config: an administrator's account (the console's, or the one `fitbase config --by` names).
package struct ConfigEditor: Sendable, Equatable {
    package let user: UserID
    package let email: String?
}

/// A change to one flag, as the CLI and the console's form give it: text as typed, `nil` for "leave as it is".
package struct ConfigFlagChange: Sendable, Equatable {
    /// `bool`, `number`, `string` or `json`; a new flag without one takes the kind its value reads as.
    package var kind: String?
    /// What the flag's audience gets.
    package var value: String?
    /// What everyone else gets (a new flag: `false`, `0`, an empty string or `{}`).
    package var defaultValue: String?
    /// `0`–`100`, up to two decimals (a new flag: 100).
    package var rolloutPercent: String?
    /// Comma- or space-separated lists; an empty text clears the condition.
    package var tiers: String?
    package var appVersions: String?
    package var platforms: String?
    package var locales: String?
    package var summary: String?
    /// Whether callers who are not signed in get the flag (``ConfigFlag/isPublic``; a new flag: not).
    package var isPublic: Bool?

    package init(
        kind: String? = nil, value: String? = nil, defaultValue: String? = nil, rolloutPercent: String? = nil, tiers: String? = nil,
        appVersions: String? = nil, platforms: String? = nil, locales: String? = nil, summary: String? = nil, isPublic: Bool? = nil
    ) {
        self.kind = kind
        self.value = value
        self.defaultValue = defaultValue
        self.rolloutPercent = rolloutPercent
        self.tiers = tiers
        self.appVersions = appVersions
        self.platforms = platforms
        self.locales = locales
        self.summary = summary
        self.isPublic = isPublic
    }
}

/// Managing remote config for `fitbase config` and the console: every change in one transaction with its entry in the
/// ``OperatorAuditTrail`` (who, when, what) and the bump that makes every instance's next request see it.
package struct RemoteConfigAdministration: Sendable {
    let database: Database
    let clock: ServerClock

    package init(database: Database, clock: ServerClock) {
        self.database = database
        self.clock = clock
    }

    /// The administrator with `email`, who may change the config; refuses an unknown address or a non-administrator.
    package func editor(email: String) async throws -> ConfigEditor {
        guard let address = EmailAddress(email) else { throw AdministrationError("\"\(email)\" is not an e-mail address") }
        guard let user = try await UserStore(database: database).find(email: address) else { throw AdministrationError("no account has the e-mail \(address)") }
        guard user.role == .admin else { throw AdministrationError("\(address) is not an administrator (fitbase admin grant-role \(address) admin)") }
        return ConfigEditor(user: user.id, email: user.email)
    }

    /// Every flag by key, with when it last changed and who changed it.
    package func list() async throws -> [(flag: ConfigFlag, changedAt: Date?, changedBy: UserID?)] {
        let flags = try await database.withConnection { db in try await RemoteConfigStore.load(on: db) }
        let changes = try await RemoteConfigStore(database: database).changes()
        return flags.map { ($0, changes[$0.key]?.at, changes[$0.key]?.by) }
    }

    /// Creates or changes the flag `key`; throws ``InvalidFields`` naming each field at fault. Returns the flag saved.
    @discardableResult
    package func set(_ key: String, _ change: ConfigFlagChange, by editor: ConfigEditor) async throws -> ConfigFlag {
        let now = clock.now
        return try await database.transaction { db in
            let existing = try await RemoteConfigStore.load(on: db).first { $0.key == key }
            let flag = try Self.apply(change, to: existing, key: key)
            try await RemoteConfigStore.save(flag, by: editor.user, now: now, on: db)
            try await OperatorAuditTrail.record(
                .configFlagSaved, by: editor.user, email: editor.email, target: "config-flag", key, detail: Self.describe(flag), now: now, on: db)
            return flag
        }
    }

    /// Sets the rollout of the flag `key` (`12.5`); throws when there is no such flag or the percentage is not one.
    @discardableResult
    package func rollout(_ key: String, percent: String, by editor: ConfigEditor) async throws -> ConfigFlag {
        guard let points = RemoteConfigRules.basisPoints(percent: percent) else {
            throw InvalidFields([FieldError(field: "rolloutPercent", message: "must be from 0 to 100 with at most two decimals")])
        }
        let now = clock.now
        return try await database.transaction { db in
            guard var flag = try await RemoteConfigStore.load(on: db).first(where: { $0.key == key }) else { throw AdministrationError("no flag is named \(key)") }
            let before = flag.rolloutPercent
            flag.rolloutBasisPoints = points
            try await RemoteConfigStore.save(flag, by: editor.user, now: now, on: db)
            try await OperatorAuditTrail.record(
                .configRolloutChanged, by: editor.user, email: editor.email, target: "config-flag", key,
                detail: "\(Self.percent(before)) → \(Self.percent(flag.rolloutPercent))", now: now, on: db)
            return flag
        }
    }

    /// Gives the account with `email` its own value of the flag `key` (`nil`: removes the override).
    package func override(_ key: String, email: String, value: String?, by editor: ConfigEditor) async throws {
        guard let address = EmailAddress(email) else { throw InvalidFields([FieldError(field: "email", message: "must be an e-mail address")]) }
        guard let user = try await UserStore(database: database).find(email: address) else {
            throw InvalidFields([FieldError(field: "email", message: "names no account")])
        }
        let now = clock.now
        try await database.transaction { db in
            guard let flag = try await RemoteConfigStore.load(on: db).first(where: { $0.key == key }) else { throw AdministrationError("no flag is named \(key)") }
            var parsed: ConfigValue?
            if let value {
                guard let read = ConfigValue.parse(value, as: flag.kind) else {
                    throw InvalidFields([FieldError(field: "value", message: "must be a \(flag.kind.rawValue) value")])
                }
                let errors = RemoteConfigRules.violations(of: read, field: "value")
                guard errors.isEmpty else { throw InvalidFields(errors) }
                parsed = read
            }
            try await RemoteConfigStore.setOverride(key, user: user.id, value: parsed, by: editor.user, now: now, on: db)
            try await OperatorAuditTrail.record(
                .configOverrideChanged, by: editor.user, email: editor.email, target: "config-flag", key,
                detail: "user \(user.id): " + (parsed.map { "\($0)" } ?? "removed"), now: now, on: db)
        }
    }

    /// Deletes the flag `key` (apps fall back to their in-app defaults); throws when there is none.
    package func delete(_ key: String, by editor: ConfigEditor) async throws {
        let now = clock.now
        try await database.transaction { db in
            guard try await RemoteConfigStore.delete(key, on: db) else { throw AdministrationError("no flag is named \(key)") }
            try await OperatorAuditTrail.record(.configFlagDeleted, by: editor.user, email: editor.email, target: "config-flag", key, now: now, on: db)
        }
    }

    /// `change` applied to `existing` (or to a new flag `key`), checked by ``RemoteConfigRules``.
    static func apply(_ change: ConfigFlagChange, to existing: ConfigFlag?, key: String) throws -> ConfigFlag {
        var errors: [FieldError] = []
        var kind = existing?.kind
        if let text = change.kind {
            if let named = ConfigValueKind(rawValue: text.lowercased()) { kind = named } else {
                errors.append(FieldError(field: "kind", message: "must be one of bool, number, string, json"))
            }
        }
        guard existing != nil || change.value != nil else { throw InvalidFields([FieldError(field: "value", message: "is required for a new flag")]) }
        let resolvedKind = kind ?? change.value.map(Self.inferredKind) ?? .string
        func value(_ text: String?, _ current: ConfigValue?, field: String, fallback: ConfigValue) -> ConfigValue {
            if let text {
                if let parsed = ConfigValue.parse(text, as: resolvedKind) { return parsed }
                errors.append(FieldError(field: field, message: "must be a \(resolvedKind.rawValue) value"))
                return fallback
            }
            // A kind changed without a new value: the old one must read as the new kind.
            if let current, current.kind != resolvedKind {
                if let parsed = ConfigValue.parse(current.description, as: resolvedKind) { return parsed }
                errors.append(FieldError(field: field, message: "must be given again as a \(resolvedKind.rawValue) value"))
            }
            return current ?? fallback
        }
        let empty = Self.emptyValue(resolvedKind)
        var flag = ConfigFlag(
            key: key, value: value(change.value, existing?.value, field: "value", fallback: empty),
            defaultValue: value(change.defaultValue, existing?.defaultValue, field: "defaultValue", fallback: empty),
            rolloutBasisPoints: existing?.rolloutBasisPoints ?? RemoteConfigRules.buckets, conditions: existing?.conditions ?? .init(),
            overrides: existing?.overrides ?? [:], summary: change.summary ?? existing?.summary ?? "",
            isPublic: change.isPublic ?? existing?.isPublic ?? false
        )
        if let text = change.rolloutPercent {
            if let points = RemoteConfigRules.basisPoints(percent: text) { flag.rolloutBasisPoints = points } else {
                errors.append(FieldError(field: "rolloutPercent", message: "must be from 0 to 100 with at most two decimals"))
            }
        }
        if let text = change.tiers {
            let names = Self.list(text)
            let tiers = names.compactMap { SubscriptionTier(rawValue: $0.lowercased()) }
            if tiers.count == names.count { flag.conditions.tiers = Set(tiers) } else {
                errors.append(FieldError(field: "tiers", message: "must name tiers among free, pro, premium"))
            }
        }
        if let text = change.appVersions {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { flag.conditions.appVersions = nil } else if let range = VersionRange(trimmed) { flag.conditions.appVersions = range } else {
                errors.append(FieldError(field: "appVersions", message: "must be a version range like >=1.4.0 <2.0.0 or ^1.4"))
            }
        }
        if let text = change.platforms {
            let names = Self.list(text)
            let platforms = names.compactMap { ConfigPlatform(rawValue: $0.lowercased()) }
            if platforms.count == names.count { flag.conditions.platforms = Set(platforms) } else {
                errors.append(FieldError(field: "platforms", message: "must name platforms among \(ConfigPlatform.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
        }
        if let text = change.locales { flag.conditions.locales = Self.list(text).map(ConfigConditions.normalizeLocale) }
        let named = Set(errors.map(\.field))
        errors += RemoteConfigRules.violations(of: flag).filter { !named.contains($0.field) }
        guard errors.isEmpty else { throw InvalidFields(errors) }
        return flag
    }

    /// A new flag's kind from its first value: `true`/`false`, a number, a JSON object or array, else text.
    static func inferredKind(_ text: String) -> ConfigValueKind {
        for kind in [ConfigValueKind.bool, .number, .json] where ConfigValue.parse(text, as: kind) != nil && (kind != .bool || ["true", "false"].contains(text)) {
            return kind
        }
        return .string
    }

    static func emptyValue(_ kind: ConfigValueKind) -> ConfigValue {
        switch kind {
        case .bool: .bool(false)
        case .number: .number(0)
        case .string: .string("")
        case .json: .json("{}")
        }
    }

    static func list(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
    }

    static func percent(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value)) %" : "\(value) %"
    }

    /// One line saying what the flag is (the audit trail's detail, `fitbase config list`).
    package static func describe(_ flag: ConfigFlag) -> String {
        var parts = [
            "\(flag.kind.rawValue)", "value=\(flag.value)", "default=\(flag.defaultValue)", "rollout=\(percent(flag.rolloutPercent))",
        ]
        let conditions = flag.conditions
        if !conditions.tiers.isEmpty { parts.append("tiers=" + conditions.tiers.map(\.rawValue).sorted().joined(separator: ",")) }
        if let range = conditions.appVersions { parts.append("appVersions=\(range)") }
        if !conditions.platforms.isEmpty { parts.append("platforms=" + conditions.platforms.map(\.rawValue).sorted().joined(separator: ",")) }
        if !conditions.locales.isEmpty { parts.append("locales=" + conditions.locales.joined(separator: ",")) }
        if !flag.overrides.isEmpty { parts.append("overrides=\(flag.overrides.count)") }
        if flag.isPublic { parts.append("public") }
        return parts.joined(separator: " ")
    }
}

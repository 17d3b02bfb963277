import Foundation

/// The kind of a remote config flag's values.
public enum ConfigValueKind: String, Sendable, Codable, CaseIterable {
    case bool, number, string, json
}

/// A remote config value.
public enum ConfigValue: Sendable, Hashable, CustomStringConvertible {
    case bool(Bool)
    /// A finite number.
    case number(Double)
    case string(String)
    /// A JSON object or array, as compact JSON text with sorted keys (``ConfigValue/json(parsing:)`` makes one).
    case json(String)

    /// The value's kind.
    public var kind: ConfigValueKind {
        switch self {
        case .bool: .bool
        case .number: .number
        case .string: .string
        case .json: .json
        }
    }

    /// `text` read as a value of `kind`: `true`/`false`, a finite number, any text, or a JSON object or array; `nil`
    /// when it is not one.
    public static func parse(_ text: String, as kind: ConfigValueKind) -> ConfigValue? {
        switch kind {
        case .bool:
            switch text.lowercased() {
            case "true", "on", "yes": return .bool(true)
            case "false", "off", "no": return .bool(false)
            default: return nil
            }
        case .number:
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else { return nil }
            return .number(number)
        case .string:
            return .string(text)
        case .json:
            return json(parsing: text)
        }
    }

    /// A ``json(_:)`` value from JSON text holding an object or an array, re-encoded compactly with sorted keys; `nil`
    /// when the text is not such JSON.
    public static func json(parsing text: String) -> ConfigValue? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)), object is [String: Any] || object is [Any],
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return .json(String(decoding: data, as: UTF8.self))
    }

    /// The value as text ``parse(_:as:)`` reads back (numbers without a needless `.0`).
    public var description: String {
        switch self {
        case .bool(let flag): flag ? "true" : "false"
        case .number(let number): number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case .string(let text): text
        case .json(let text): text
        }
    }
}

/// The platform an app runs on, as it states it (`GET /v1/config?platform=ios`).
public enum ConfigPlatform: String, Sendable, Codable, CaseIterable {
    case ios, ipados, macos, watchos, visionos, android, web
}

/// Who a flag's value is for, beyond the rollout: every listed condition must hold, an empty one holds for everyone.
public struct ConfigConditions: Sendable, Hashable {
    /// The caller's tier must be one of these.
    public var tiers: Set<SubscriptionTier>
    /// The app's version must be in this range (an app that does not say its version is outside).
    public var appVersions: VersionRange?
    /// The app's platform must be one of these.
    public var platforms: Set<ConfigPlatform>
    /// The app's locale must be, or begin with, one of these (`de` holds for `de-AT`), compared without case and with
    /// `_` read as `-`.
    public var locales: [String]

    /// Conditions; all empty by default (everyone).
    public init(tiers: Set<SubscriptionTier> = [], appVersions: VersionRange? = nil, platforms: Set<ConfigPlatform> = [], locales: [String] = []) {
        self.tiers = tiers
        self.appVersions = appVersions
        self.platforms = platforms
        self.locales = locales.map(Self.normalizeLocale)
    }

    /// Whether there is no condition.
    public var isEmpty: Bool { tiers.isEmpty && appVersions == nil && platforms.isEmpty && locales.isEmpty }

    /// Whether `context` meets every condition.
    public func admit(_ context: ConfigContext) -> Bool {
        if !tiers.isEmpty, !tiers.contains(context.tier) { return false }
        if let appVersions {
            guard let version = context.appVersion, appVersions.contains(version) else { return false }
        }
        if !platforms.isEmpty {
            guard let platform = context.platform, platforms.contains(platform) else { return false }
        }
        if !locales.isEmpty {
            guard let locale = context.locale.map(Self.normalizeLocale) else { return false }
            return locales.contains { locale == $0 || locale.hasPrefix($0 + "-") }
        }
        return true
    }

    /// `de_AT` → `de-at`.
    public static func normalizeLocale(_ locale: String) -> String {
        locale.lowercased().replacingOccurrences(of: "_", with: "-")
    }

    /// Whether `locale` is a language tag a condition may name: 2–3 letters, then up to three `-` parts of 2–8 letters
    /// or digits (`de`, `pt-BR`, `zh-Hant-TW`).
    public static func isLocale(_ locale: String) -> Bool {
        let parts = normalizeLocale(locale).split(separator: "-", omittingEmptySubsequences: false)
        guard let language = parts.first, (2...3).contains(language.count), language.utf8.allSatisfy({ (0x61...0x7A).contains($0) }),
            parts.count <= 4
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (2...8).contains(part.count) && part.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
        }
    }
}

/// A named remote config flag: the value its audience gets, the value everyone else gets, and who its audience is —
/// the users its ``conditions`` admit, of whom ``rolloutBasisPoints`` in 10,000 (by a stable hash of the key and the
/// user id), plus the testers of ``overrides``, who get their own value whatever the rest says.
public struct ConfigFlag: Sendable, Hashable {
    /// `social_beta`, `leaderboard.page-size`: 1–64 of `a-z`, `0-9`, `_`, `.`, `-`, starting with a letter.
    public var key: String
    /// What the audience gets.
    public var value: ConfigValue
    /// What everyone else gets, anonymous callers included when the flag is ``isPublic``.
    public var defaultValue: ConfigValue
    /// How much of the admitted users is in the audience, in hundredths of a percent (0–10,000; 1,000 is 10 %).
    public var rolloutBasisPoints: Int
    public var conditions: ConfigConditions
    /// Per-user values (testers), of the flag's kind.
    public var overrides: [UserID: ConfigValue]
    /// What the flag is for, for operators (never sent to apps).
    public var summary: String
    /// Whether callers who are not signed in get the flag (its default): for what an app needs before sign-in. Other
    /// flags are left out of their answer, keys included, so an unreleased feature's name stays with the accounts.
    public var isPublic: Bool

    /// A flag; new flags serve ``value`` to every signed-in user unless told otherwise, and nothing to anonymous callers.
    public init(
        key: String, value: ConfigValue, defaultValue: ConfigValue, rolloutBasisPoints: Int = 10_000, conditions: ConfigConditions = .init(),
        overrides: [UserID: ConfigValue] = [:], summary: String = "", isPublic: Bool = false
    ) {
        self.key = key
        self.value = value
        self.defaultValue = defaultValue
        self.rolloutBasisPoints = rolloutBasisPoints
        self.conditions = conditions
        self.overrides = overrides
        self.summary = summary
        self.isPublic = isPublic
    }

    /// The flag's kind (its default value's).
    public var kind: ConfigValueKind { defaultValue.kind }

    /// The rollout as a percentage (`12.5`).
    public var rolloutPercent: Double { Double(rolloutBasisPoints) / 100 }
}

/// What the server knows of the caller when it resolves flags.
public struct ConfigContext: Sendable, Hashable {
    /// The signed-in user; `nil`: anonymous, who gets the default of each public flag and nothing of the others.
    public var user: UserID?
    public var tier: SubscriptionTier
    public var appVersion: SemanticVersion?
    public var platform: ConfigPlatform?
    /// A language tag (`de-AT`).
    public var locale: String?

    /// A caller.
    public init(user: UserID?, tier: SubscriptionTier = .free, appVersion: SemanticVersion? = nil, platform: ConfigPlatform? = nil, locale: String? = nil) {
        self.user = user
        self.tier = tier
        self.appVersion = appVersion
        self.platform = platform
        self.locale = locale
    }
}

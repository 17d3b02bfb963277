import Foundation

/// How a flag resolves for a caller, and what a flag may be.
///
/// Resolution, in order: an anonymous caller gets the default of a public flag (``ConfigFlag/isPublic``) and no other
/// flag at all; a user with an override gets it; a user the conditions admit and whose bucket is below the rollout gets
/// the flag's value; every other signed-in user the default (left out, the app would take its in-app default, which
/// may be the flag's value: a staged rollout needs the default said).
///
/// The bucket is a stable hash of the flag's key and the user id (FNV-1a, then MurmurHash3's 64-bit finalizer so nearby
/// ids spread), taken modulo 10,000: the same user always lands in the same bucket of a flag, so a user in at 10 % (bucket
/// below 1,000) is still in at 20 %, and different flags pick different users.
public enum RemoteConfigRules {
    /// Buckets of a rollout: hundredths of a percent.
    public static let buckets = 10_000
    public static let maximumKeyLength = 64
    public static let maximumStringLength = 1_000
    /// JSON text a value may hold, in bytes.
    public static let maximumJSONBytes = 8_192
    public static let maximumSummaryLength = 200
    public static let maximumLocales = 20
    /// Flags one deployment may define (every `GET /v1/config` resolves all of them).
    public static let maximumFlags = 500
    /// Testers one flag may name.
    public static let maximumOverrides = 1_000

    /// How a caller came by a flag's value.
    public enum Source: String, Sendable, Equatable {
        case `default`, rollout, override
    }

    /// The user's bucket of `key`, 0 ..< 10,000.
    public static func bucket(key: String, user: UserID) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        hash = (hash ^ 0x2F) &* 0x0000_0100_0000_01b3  // "/" between the key and the id
        for byte in user.description.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return Int(hash % UInt64(buckets))
    }

    /// Whether `user` is inside a rollout of `basisPoints` of `key` (conditions aside).
    public static func isInRollout(key: String, user: UserID, basisPoints: Int) -> Bool {
        bucket(key: key, user: user) < basisPoints
    }

    /// The value `flag` has for `context`, and why.
    public static func resolve(_ flag: ConfigFlag, for context: ConfigContext) -> (value: ConfigValue, source: Source) {
        guard let user = context.user else { return (flag.defaultValue, .default) }
        if let override = flag.overrides[user] { return (override, .override) }
        if flag.conditions.admit(context), isInRollout(key: flag.key, user: user, basisPoints: flag.rolloutBasisPoints) {
            return (flag.value, .rollout)
        }
        return (flag.defaultValue, .default)
    }

    /// Every flag's value for `context`, by key: for an anonymous caller, only the public flags'.
    public static func resolve(_ flags: [ConfigFlag], for context: ConfigContext) -> [String: ConfigValue] {
        Dictionary(
            flags.filter { context.user != nil || $0.isPublic }.map { ($0.key, resolve($0, for: context).value) },
            uniquingKeysWith: { first, _ in first })
    }

    /// `12.5` or `10` or `10%` as basis points (1,250, 1,000); `nil` unless 0–100 with at most two decimals.
    public static func basisPoints(percent text: String) -> Int? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if text.hasSuffix("%") { text.removeLast() }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, (1...3).contains(whole.count), whole.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let units = Int(whole)
        else { return nil }
        var hundredths = 0
        if parts.count == 2 {
            let fraction = parts[1]
            guard (1...2).contains(fraction.count), fraction.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let digits = Int(fraction) else { return nil }
            hundredths = fraction.count == 1 ? digits * 10 : digits
        }
        let points = units * 100 + hundredths
        return points <= buckets ? points : nil
    }

    /// Every broken rule of `flag` (fields `key`, `value`, `defaultValue`, `rolloutPercent`, `locales`, `summary`,
    /// `overrides`), empty when it may be saved.
    public static func violations(of flag: ConfigFlag) -> [FieldError] {
        var errors: [FieldError] = []
        if !isKey(flag.key) {
            errors.append(FieldError(field: "key", message: "must be 1 to \(maximumKeyLength) of a-z, 0-9, _, . and -, starting with a letter"))
        }
        errors += violations(of: flag.value, field: "value")
        errors += violations(of: flag.defaultValue, field: "defaultValue")
        if flag.value.kind != flag.defaultValue.kind {
            errors.append(FieldError(field: "value", message: "must be of the default value's kind (\(flag.defaultValue.kind.rawValue))"))
        }
        if !(0...buckets).contains(flag.rolloutBasisPoints) {
            errors.append(FieldError(field: "rolloutPercent", message: "must be from 0 to 100"))
        }
        if flag.conditions.locales.count > maximumLocales {
            errors.append(FieldError(field: "locales", message: "must name at most \(maximumLocales) locales"))
        } else if let bad = flag.conditions.locales.first(where: { !ConfigConditions.isLocale($0) }) {
            errors.append(FieldError(field: "locales", message: "\"\(bad)\" is not a language tag (de, pt-BR)"))
        }
        if flag.summary.count > maximumSummaryLength {
            errors.append(FieldError(field: "summary", message: "must be at most \(maximumSummaryLength) characters"))
        }
        if flag.overrides.count > maximumOverrides {
            errors.append(FieldError(field: "overrides", message: "must name at most \(maximumOverrides) users"))
        }
        for (user, value) in flag.overrides.sorted(by: { $0.key.description < $1.key.description }) where value.kind != flag.kind {
            errors.append(FieldError(field: "overrides.\(user)", message: "must be of the flag's kind (\(flag.kind.rawValue))"))
        }
        return errors
    }

    /// The broken rules of one value.
    public static func violations(of value: ConfigValue, field: String) -> [FieldError] {
        switch value {
        case .number(let number) where !number.isFinite:
            return [FieldError(field: field, message: "must be a finite number")]
        case .string(let text) where text.count > maximumStringLength:
            return [FieldError(field: field, message: "must be at most \(maximumStringLength) characters")]
        case .json(let text) where text.utf8.count > maximumJSONBytes:
            return [FieldError(field: field, message: "must be at most \(maximumJSONBytes) bytes of JSON")]
        case .json(let text) where ConfigValue.json(parsing: text) == nil:
            return [FieldError(field: field, message: "must be a JSON object or array")]
        default:
            return []
        }
    }

    /// Whether `key` may name a flag.
    public static func isKey(_ key: String) -> Bool {
        let scalars = key.utf8
        guard let first = scalars.first, (0x61...0x7A).contains(first), scalars.count <= maximumKeyLength else { return false }
        return scalars.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D }
    }
}

import FitBaseCore
import Foundation
import Testing

/// Remote config: stable rollouts, conditions, overrides, and what a flag may be.
@Suite struct RemoteConfigRulesTests {
    /// `count` distinct user ids from a fixed seed (SplitMix64), so the shares below are the same on every run.
    static func users(_ count: Int, seed: UInt64 = 0x5EED) -> [UserID] {
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return (0..<count).map { _ in
            let (a, b) = (next(), next())
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { bytes in
                withUnsafeBytes(of: a) { bytes.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 8) }
                withUnsafeBytes(of: b) { (bytes.baseAddress! + 8).copyMemory(from: $0.baseAddress!, byteCount: 8) }
            }
            return UserID(rawValue: UUID(uuid: uuid))
        }
    }

    static func beta(_ basisPoints: Int, conditions: ConfigConditions = .init(), overrides: [UserID: ConfigValue] = [:]) -> ConfigFlag {
        ConfigFlag(key: "social_beta", value: .bool(true), defaultValue: .bool(false), rolloutBasisPoints: basisPoints, conditions: conditions, overrides: overrides)
    }

    @Test func aUserInAtTenPercentIsStillInAtTwentyAndTheShareIsWithinOnePoint() {
        let users = Self.users(100_000)
        #expect(Set(users).count == users.count)
        var previous: Set<UserID> = []
        for percent in [1, 5, 10, 20, 50, 90, 100] {
            let flag = Self.beta(percent * 100)
            let inside = Set(users.filter { RemoteConfigRules.resolve(flag, for: ConfigContext(user: $0)).value == .bool(true) })
            let share = Double(inside.count) / Double(users.count) * 100
            #expect(abs(share - Double(percent)) <= 1, "\(percent) %: \(share) %")
            // Growing the rollout only adds users.
            #expect(previous.isSubset(of: inside), "someone in before \(percent) % is out at \(percent) %")
            previous = inside
        }
        #expect(previous.count == users.count)
        // Nobody is in at 0 %.
        #expect(users.prefix(1_000).allSatisfy { RemoteConfigRules.resolve(Self.beta(0), for: ConfigContext(user: $0)).source == .default })
    }

    @Test func theBucketIsStableAndDiffersBetweenFlags() {
        let users = Self.users(2_000, seed: 7)
        for user in users.prefix(50) {
            #expect(RemoteConfigRules.bucket(key: "social_beta", user: user) == RemoteConfigRules.bucket(key: "social_beta", user: user))
        }
        // A known id's bucket is pinned: changing the hash would move every user of every live rollout.
        let pinned = UserID(rawValue: UUID(uuidString: "6f1c1f7e-4d3b-4a51-9c1e-2a7b5e0c9d10")!)
        #expect(RemoteConfigRules.bucket(key: "social_beta", user: pinned) == RemoteConfigRules.bucket(key: "social_beta", user: UserID("6F1C1F7E-4D3B-4A51-9C1E-2A7B5E0C9D10")!))
        // Two flags at 10 % pick different users (independent: about 1 % are in both).
        let a = Set(users.filter { RemoteConfigRules.isInRollout(key: "social_beta", user: $0, basisPoints: 1_000) })
        let b = Set(users.filter { RemoteConfigRules.isInRollout(key: "new_paywall", user: $0, basisPoints: 1_000) })
        #expect(a != b)
        #expect(a.intersection(b).count < a.count / 3)
    }

    @Test func anonymousCallersGetTheDefault() {
        let flag = Self.beta(10_000)
        #expect(RemoteConfigRules.resolve(flag, for: ConfigContext(user: nil)) == (.bool(false), .default))
        #expect(RemoteConfigRules.resolve(flag, for: ConfigContext(user: UserID())).source == .rollout)
    }

    @Test func anonymousCallersSeeOnlyPublicFlagsAndSignedInCallersSeeEvery() {
        var unreleased = Self.beta(0)
        unreleased.key = "secret_redesign"
        var launch = Self.beta(10_000)
        launch.key = "onboarding_variant"
        launch.isPublic = true
        #expect(RemoteConfigRules.resolve([unreleased, launch], for: ConfigContext(user: nil)) == ["onboarding_variant": .bool(false)])
        let signedIn = RemoteConfigRules.resolve([unreleased, launch], for: ConfigContext(user: UserID()))
        #expect(signedIn == ["secret_redesign": .bool(false), "onboarding_variant": .bool(true)])
    }

    @Test func conditionsOnTierVersionPlatformAndLocale() throws {
        // Its own line: inside the call, `#require` would check the `VersionRange??` its optional argument makes.
        let versions = try #require(VersionRange(">=1.4 <2"))
        let conditions = ConfigConditions(
            tiers: [.pro, .premium], appVersions: versions, platforms: [.ios, .ipados], locales: ["de", "pt-BR"])
        let flag = Self.beta(10_000, conditions: conditions)
        let user = UserID()
        let admitted = ConfigContext(user: user, tier: .pro, appVersion: SemanticVersion("1.4.2"), platform: .ios, locale: "de_AT")
        #expect(RemoteConfigRules.resolve(flag, for: admitted).source == .rollout)
        var context = admitted
        let variations: [(String, (inout ConfigContext) -> Void)] = [
            ("free tier", { $0.tier = .free }),
            ("older app", { $0.appVersion = SemanticVersion("1.3.9") }),
            ("next major", { $0.appVersion = SemanticVersion("2.0") }),
            ("no version", { $0.appVersion = nil }),
            ("android", { $0.platform = .android }),
            ("no platform", { $0.platform = nil }),
            ("French", { $0.locale = "fr-FR" }),
            ("Portuguese of Portugal", { $0.locale = "pt-PT" }),
            ("a locale only starting alike", { $0.locale = "den" }),
            ("no locale", { $0.locale = nil }),
        ]
        for (name, change) in variations {
            context = admitted
            change(&context)
            #expect(RemoteConfigRules.resolve(flag, for: context).source == .default, "\(name)")
        }
        context = admitted
        context.locale = "pt-br"
        context.tier = .premium
        #expect(RemoteConfigRules.resolve(flag, for: context).value == .bool(true))
    }

    @Test func anOverrideWinsOverConditionsAndRollout() {
        let tester = UserID()
        let flag = Self.beta(0, conditions: ConfigConditions(platforms: [.android]), overrides: [tester: .bool(true)])
        #expect(RemoteConfigRules.resolve(flag, for: ConfigContext(user: tester, platform: .ios)) == (.bool(true), .override))
        #expect(RemoteConfigRules.resolve(flag, for: ConfigContext(user: UserID(), platform: .android)).source == .default)
        // An override can also keep a tester out of a full rollout.
        let out = Self.beta(10_000, overrides: [tester: .bool(false)])
        #expect(RemoteConfigRules.resolve(out, for: ConfigContext(user: tester)) == (.bool(false), .override))
    }

    @Test func versionsAndRangesParseStrictly() throws {
        #expect(SemanticVersion("1.4") == SemanticVersion(1, 4, 0))
        #expect(SemanticVersion("10.0.12")! > SemanticVersion("9.9.99")!)
        for bad in ["", "1.", ".1", "1.2.3.4", "v1.2", "1.2-beta", "-1", "1.2 ", "1234567"] { #expect(SemanticVersion(bad) == nil, "\(bad)") }
        #expect(VersionRange("^1.4")?.description == ">=1.4.0 <2.0.0")
        #expect(VersionRange("~1.4.2")?.description == ">=1.4.2 <1.5.0")
        #expect(VersionRange("1.2.3")?.contains(SemanticVersion(1, 2, 3)) == true)
        #expect(VersionRange(">1.2.3")?.contains(SemanticVersion(1, 2, 3)) == false)
        #expect(VersionRange("<=1.2.3")?.contains(SemanticVersion(1, 2, 3)) == true)
        let range = try #require(VersionRange(">=1.4.0 <2.0.0"))
        #expect(VersionRange(range.description) == range)
        for bad in ["", "  ", "=>1.0", ">=1.0 || <0.5", ">=x", "^"] { #expect(VersionRange(bad) == nil, "\(bad)") }
    }

    @Test func valuesAndPercentagesParse() {
        #expect(ConfigValue.parse("on", as: .bool) == .bool(true))
        #expect(ConfigValue.parse("maybe", as: .bool) == nil)
        #expect(ConfigValue.parse("20", as: .number) == .number(20))
        #expect(ConfigValue.parse("nan", as: .number) == nil)
        #expect(ConfigValue.parse(#"{"b":1,"a":[true]}"#, as: .json) == .json(#"{"a":[true],"b":1}"#))
        #expect(ConfigValue.parse("3", as: .json) == nil)
        #expect(ConfigValue.parse("{", as: .json) == nil)
        #expect(ConfigValue.number(20).description == "20")
        #expect(RemoteConfigRules.basisPoints(percent: "10") == 1_000)
        #expect(RemoteConfigRules.basisPoints(percent: "12.5%") == 1_250)
        #expect(RemoteConfigRules.basisPoints(percent: "0.01") == 1)
        #expect(RemoteConfigRules.basisPoints(percent: "100") == 10_000)
        for bad in ["100.01", "101", "-1", "1.234", "", "ten", "1e1"] { #expect(RemoteConfigRules.basisPoints(percent: bad) == nil, "\(bad)") }
    }

    @Test func aFlagIsRefusedNamingEachField() {
        var flag = ConfigFlag(key: "Social Beta", value: .number(1), defaultValue: .bool(false), rolloutBasisPoints: 10_001, conditions: ConfigConditions(locales: ["german"]))
        flag.summary = String(repeating: "x", count: 201)
        flag.overrides = [UserID(): .string("yes")]
        let fields = RemoteConfigRules.violations(of: flag).map(\.field)
        #expect(fields.prefix(5) == ["key", "value", "rolloutPercent", "locales", "summary"])
        #expect(fields.last?.hasPrefix("overrides.") == true)
        #expect(RemoteConfigRules.violations(of: Self.beta(1_000)).isEmpty)
        #expect(RemoteConfigRules.violations(of: .string(String(repeating: "a", count: 1_001)), field: "value").map(\.field) == ["value"])
        #expect(RemoteConfigRules.violations(of: .json("[" + String(repeating: "1,", count: 5_000) + "1]"), field: "value").map(\.field) == ["value"])
        for key in ["a", "social_beta", "leaderboard.page-size"] { #expect(RemoteConfigRules.isKey(key), "\(key)") }
        for key in ["", "1st", "_x", "A", "a b", String(repeating: "a", count: 65)] { #expect(!RemoteConfigRules.isKey(key), "\(key)") }
    }
}

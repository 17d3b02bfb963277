import FitBaseAPI
import FitBaseCore
import Foundation

/// A value a remote config flag may hold in the app: a boolean, a number, a string, or a JSON tree.
public protocol RemoteConfigValue: Sendable {
    /// The flag's JSON value as this type; `nil` when it is another kind (the in-app default applies then).
    init?(configJSON: JSONValue)
}

extension Bool: RemoteConfigValue {
    public init?(configJSON: JSONValue) {
        guard case .bool(let flag) = configJSON else { return nil }
        self = flag
    }
}

extension Int: RemoteConfigValue {
    public init?(configJSON: JSONValue) {
        switch configJSON {
        case .int(let number): self = number
        case .double(let number) where number.rounded() == number && abs(number) < 1e15: self = Int(number)
        default: return nil
        }
    }
}

extension Double: RemoteConfigValue {
    public init?(configJSON: JSONValue) {
        switch configJSON {
        case .int(let number): self = Double(number)
        case .double(let number): self = number
        default: return nil
        }
    }
}

extension String: RemoteConfigValue {
    public init?(configJSON: JSONValue) {
        guard case .string(let text) = configJSON else { return nil }
        self = text
    }
}

extension JSONValue: RemoteConfigValue {
    public init?(configJSON: JSONValue) {
        self = configJSON
    }
}

/// A flag the app reads, typed, with the value the app uses when the server has none (never fetched, offline on the
/// first launch, the flag deleted, or of another kind).
///
/// ```swift
/// extension ConfigKey where Value == Int {
///     static let leaderboardPageSize = ConfigKey("leaderboard_page_size", default: 20)
/// }
/// let pageSize = await dependencies.remoteConfig.current()[.leaderboardPageSize]
/// ```
public struct ConfigKey<Value: RemoteConfigValue>: Sendable {
    /// The flag's key on the server (`fitbase config set KEY …`).
    public let name: String
    /// The in-app default.
    public let defaultValue: Value

    /// A flag named `name` with the in-app default `defaultValue`.
    public init(_ name: String, default defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }
}

extension ConfigKey where Value == Bool {
    /// Seed 004's social beta: whether the Groups tab (groups, challenges, leaderboards) shows. Shown unless the server
    /// says otherwise, e.g. `fitbase config set social_beta true --default false --rollout 10`.
    public static let socialBeta = ConfigKey("social_beta", default: true)
}

/// The flags' values as the app last fetched them for the signed-in user (or, signed out, the flags the server marks
/// public: any other flag takes its in-app default until sign-in).
public struct RemoteConfigSnapshot: Sendable, Equatable {
    /// The server's values by key; empty before the first fetch.
    public var values: [String: JSONValue]
    /// When the server last answered (a `304` included); `nil`: never, only in-app defaults.
    public var fetchedAt: Date?

    /// Values as given.
    public init(values: [String: JSONValue] = [:], fetchedAt: Date? = nil) {
        self.values = values
        self.fetchedAt = fetchedAt
    }

    /// The value of `key`: the server's, or the in-app default.
    public subscript<Value>(_ key: ConfigKey<Value>) -> Value {
        values[key.name].flatMap(Value.init(configJSON:)) ?? key.defaultValue
    }
}

/// Remote config (``getRemoteConfig``): flags and values the server resolves for the signed-in user — staged rollouts,
/// conditions on tier, app version, platform and locale, testers' overrides — with in-app defaults (``ConfigKey``).
///
/// The last answer is kept sealed on the device per account, so a launch offline has last time's values; the app fetches
/// at launch and each return to the foreground, with the answer's `ETag` (an unchanged config costs a `304`).
/// ``AppModel`` does both and shows the Groups tab by ``ConfigKey/socialBeta``.
public protocol RemoteConfigService: Sendable {
    /// The values kept on the device for whoever is signed in, without asking the server.
    func current() async -> RemoteConfigSnapshot
    /// Asks the server for the signed-in user's values and keeps them; when it cannot be reached, the kept values.
    @discardableResult
    func refresh() async -> RemoteConfigSnapshot
}

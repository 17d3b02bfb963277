import Foundation

/// The optional language-model source of recommendations (Anthropic's Messages API), from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_ANTHROPIC_API_KEY` | API key; setting it turns the model source on | unset: rules only |
/// | `FITBASE_ANTHROPIC_BASE_URL` | base of `POST /v1/messages` | `https://api.anthropic.com` |
/// | `FITBASE_ANTHROPIC_MODEL` | model name | `claude-sonnet-4-5` |
/// | `FITBASE_ANTHROPIC_DAILY_CALLS_FREE`, `_PREMIUM` | model answers a day for one account, by tier | `10`, `50` |
/// | `FITBASE_ANTHROPIC_DAILY_BUDGET` | model calls a day across all accounts (every instance counts alike) | `2000` |
public struct LanguageModelConfiguration: Sendable, Equatable {
    public static let defaultBaseURL = "https://api.anthropic.com"
    public static let defaultModel = "claude-sonnet-4-5"

    public var apiKey: String
    public var baseURL: String
    public var model: String
    /// How long one answer may take before the rules answer instead.
    public var timeout: Duration
    /// How many answers a day one account may have from the model (a paid call each), on the free tier and on a paid
    /// one; past that the rules answer until the day is over. 0: the rules always.
    public var dailyCallsFree = 10
    public var dailyCallsPremium = 50
    /// How many calls a day the whole deployment may make, whoever asks; past that the rules answer everyone until
    /// the day is over. 0: the rules always.
    public var dailyBudget = 2000

    public init(apiKey: String, baseURL: String = defaultBaseURL, model: String = defaultModel, timeout: Duration = .seconds(8)) {
        self.apiKey = apiKey
        self.baseURL = baseURL
        self.model = model
        self.timeout = timeout
    }

    /// The configuration the environment asks for; `nil` without an API key.
    static func resolve(environment: [String: String]) throws(ConfigurationError) -> LanguageModelConfiguration? {
        guard let key = environment["FITBASE_ANTHROPIC_API_KEY"]?.trimmingCharacters(in: .whitespaces), !key.isEmpty else { return nil }
        var configuration = LanguageModelConfiguration(apiKey: key)
        if let value = environment["FITBASE_ANTHROPIC_BASE_URL"] {
            guard let url = URLComponents(string: value), ["http", "https"].contains(url.scheme?.lowercased()), url.host?.isEmpty == false,
                url.query == nil
            else {
                throw ConfigurationError(setting: "anthropic-base-url", source: "FITBASE_ANTHROPIC_BASE_URL", value: value, expected: "an absolute http(s) URL")
            }
            configuration.baseURL = value.hasSuffix("/") ? String(value.dropLast()) : value
        }
        if let value = environment["FITBASE_ANTHROPIC_MODEL"] {
            let model = value.trimmingCharacters(in: .whitespaces)
            guard !model.isEmpty, !model.contains(where: \.isWhitespace) else {
                throw ConfigurationError(setting: "anthropic-model", source: "FITBASE_ANTHROPIC_MODEL", value: value, expected: "a model name such as \(defaultModel)")
            }
            configuration.model = model
        }
        for (name, setting, keyPath) in [
            ("FITBASE_ANTHROPIC_DAILY_CALLS_FREE", "anthropic-daily-calls-free", \LanguageModelConfiguration.dailyCallsFree),
            ("FITBASE_ANTHROPIC_DAILY_CALLS_PREMIUM", "anthropic-daily-calls-premium", \LanguageModelConfiguration.dailyCallsPremium),
            ("FITBASE_ANTHROPIC_DAILY_BUDGET", "anthropic-daily-budget", \LanguageModelConfiguration.dailyBudget),
        ] {
            guard let value = environment[name] else { continue }
            guard let calls = Int(value.trimmingCharacters(in: .whitespaces)), (0...100_000).contains(calls) else {
                throw ConfigurationError(setting: setting, source: name, value: value, expected: "a number of calls from 0 to 100000")
            }
            configuration[keyPath: keyPath] = calls
        }
        return configuration
    }
}

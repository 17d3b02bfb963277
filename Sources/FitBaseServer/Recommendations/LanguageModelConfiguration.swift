import Foundation

/// The optional language-model source of recommendations (Anthropic's Messages API), from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_ANTHROPIC_API_KEY` | API key; setting it turns the model source on | unset: rules only |
/// | `FITBASE_ANTHROPIC_BASE_URL` | base of `POST /v1/messages` | `https://api.anthropic.com` |
/// | `FITBASE_ANTHROPIC_MODEL` | model name | `claude-sonnet-4-5` |
public struct LanguageModelConfiguration: Sendable, Equatable {
    public static let defaultBaseURL = "https://api.anthropic.com"
    public static let defaultModel = "claude-sonnet-4-5"

    public var apiKey: String
    public var baseURL: String
    public var model: String
    /// How long one answer may take before the rules answer instead.
    public var timeout: Duration

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
        return configuration
    }
}

import Foundation

/// Settings of invites and universal links, from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_APP_SCHEME` | the app's URL scheme, for invite deep links (`{scheme}://group/invite/{token}`) | `fitbase` |
/// | `FITBASE_APPLE_APP_IDS` | comma list of `TEAMID.bundle.id` served in `/.well-known/apple-app-site-association` | empty |
/// | `FITBASE_APP_STORE_URL` | the app's App Store page (`https://apps.apple.com/…`), linked from the invite page | none: no App Store link |
public struct SocialConfiguration: Sendable, Equatable {
    public var appScheme = "fitbase"
    public var appleAppIDs: [String] = []
    /// Where the invite page sends a friend without the app; `nil`: the page offers no App Store link.
    public var appStoreURL: String?
    /// Event streams one account may hold open on an instance (`FITBASE_MAX_STREAMS_PER_USER`); a new one closes the
    /// account's oldest.
    public var maxStreamsPerUser = 5
    /// Event streams an instance holds open at most (`FITBASE_MAX_STREAMS`); past that, 503 `busy`.
    public var maxStreams = 20_000

    public init(appScheme: String = "fitbase", appleAppIDs: [String] = [], appStoreURL: String? = nil) {
        self.appScheme = appScheme
        self.appleAppIDs = appleAppIDs
        self.appStoreURL = appStoreURL
    }

    static func resolve(environment: [String: String]) throws(ConfigurationError) -> SocialConfiguration {
        var configuration = SocialConfiguration()
        if let scheme = environment["FITBASE_APP_SCHEME"]?.trimmingCharacters(in: .whitespaces), !scheme.isEmpty {
            guard let first = scheme.unicodeScalars.first, CharacterSet.letters.contains(first),
                scheme.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0) })
            else {
                throw ConfigurationError(setting: "app-scheme", source: "FITBASE_APP_SCHEME", value: scheme, expected: "a URL scheme such as fittoday")
            }
            configuration.appScheme = scheme.lowercased()
        }
        configuration.appleAppIDs = (environment["FITBASE_APPLE_APP_IDS"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let bad = configuration.appleAppIDs.first(where: { $0.split(separator: ".").count < 2 }) {
            throw ConfigurationError(setting: "apple-app-ids", source: "FITBASE_APPLE_APP_IDS", value: bad, expected: "TEAMID.bundle.identifier entries")
        }
        if let text = environment["FITBASE_APP_STORE_URL"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            guard let components = URLComponents(string: text), components.scheme?.lowercased() == "https", components.host?.isEmpty == false,
                components.user == nil, components.password == nil
            else {
                throw ConfigurationError(
                    setting: "app-store-url", source: "FITBASE_APP_STORE_URL", value: text, expected: "an https URL such as https://apps.apple.com/app/id1234567890"
                )
            }
            configuration.appStoreURL = text
        }
        for (variable, setting, limit) in [
            ("FITBASE_MAX_STREAMS_PER_USER", "max-streams-per-user", \SocialConfiguration.maxStreamsPerUser),
            ("FITBASE_MAX_STREAMS", "max-streams", \SocialConfiguration.maxStreams),
        ] {
            guard let text = environment[variable] else { continue }
            guard let parsed = Int(text.trimmingCharacters(in: .whitespaces)), parsed > 0 else {
                throw ConfigurationError(setting: setting, source: variable, value: text, expected: "a positive number of streams")
            }
            configuration[keyPath: limit] = parsed
        }
        return configuration
    }
}

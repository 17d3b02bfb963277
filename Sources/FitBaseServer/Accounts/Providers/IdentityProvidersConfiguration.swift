import Foundation

/// Settings of Sign in with Apple, Google sign-in and the master key, all from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_APPLE_AUDIENCES` | comma list of bundle ids and services ids Apple tokens may be issued to | empty: Apple sign-in off |
/// | `FITBASE_APPLE_JWKS_URL` | Apple's signing keys | `https://appleid.apple.com/auth/keys` |
/// | `FITBASE_APPLE_API_URL` | base of Apple's `/auth/token` and `/auth/revoke` | `https://appleid.apple.com` |
/// | `FITBASE_APPLE_TEAM_ID`, `FITBASE_APPLE_KEY_ID`, `FITBASE_APPLE_PRIVATE_KEY_FILE` | the Sign in with Apple key (.p8) that signs client secrets; all three or none | none: codes are not exchanged |
/// | `FITBASE_GOOGLE_AUDIENCES` | comma list of OAuth client ids Google tokens may be issued to | empty: Google sign-in off |
/// | `FITBASE_GOOGLE_JWKS_URL` | Google's signing keys | `https://www.googleapis.com/oauth2/v3/certs` |
/// | `FITBASE_GOOGLE_REQUIRE_NONCE` | `true`: Google sign-ins must send the nonce their token was minted with, as Apple's do | `false` |
/// | `FITBASE_MASTER_KEY` | base64 of the 32-byte master key (production: from a secret store) | unset: use the key file |
/// | `FITBASE_MASTER_KEY_FILE` | file holding the master key, created 0600 on first run | `<data dir>/master.key` |
/// | `FITBASE_ALLOW_GENERATED_MASTER_KEY` | `true`: a server listening beyond loopback may create its key file inside the data directory (else it refuses to start; an existing file is used, with a warning) | `false` |
public struct IdentityProvidersConfiguration: Sendable, Equatable {
    public var appleAudiences: [String] = []
    public var appleJWKSURL = "https://appleid.apple.com/auth/keys"
    public var appleAPIURL = "https://appleid.apple.com"
    public var appleTeamID: String?
    public var appleKeyID: String?
    public var applePrivateKeyFile: String?
    public var googleAudiences: [String] = []
    public var googleJWKSURL = "https://www.googleapis.com/oauth2/v3/certs"
    /// Google sign-ins without a `nonce` are refused (a token that carries one is refused without it either way).
    public var googleRequiresNonce = false
    public var masterKey: String?
    public var masterKeyFile: String?
    /// A server others can reach may generate `master.key` inside its data directory (`FITBASE_ALLOW_GENERATED_MASTER_KEY`).
    public var allowsGeneratedMasterKey = false

    public init() {}

    static func resolve(environment: [String: String]) throws(ConfigurationError) -> IdentityProvidersConfiguration {
        var configuration = IdentityProvidersConfiguration()
        configuration.appleAudiences = list(environment["FITBASE_APPLE_AUDIENCES"])
        configuration.googleAudiences = list(environment["FITBASE_GOOGLE_AUDIENCES"])
        for (variable, keyPath) in [
            ("FITBASE_APPLE_JWKS_URL", \IdentityProvidersConfiguration.appleJWKSURL),
            ("FITBASE_APPLE_API_URL", \.appleAPIURL),
            ("FITBASE_GOOGLE_JWKS_URL", \.googleJWKSURL),
        ] {
            guard let value = environment[variable] else { continue }
            guard let url = URLComponents(string: value), ["http", "https"].contains(url.scheme?.lowercased()), url.host?.isEmpty == false else {
                throw ConfigurationError(setting: variable.lowercased(), source: variable, value: value, expected: "an absolute http(s) URL")
            }
            configuration[keyPath: keyPath] = value.hasSuffix("/") ? String(value.dropLast()) : value
        }
        if let value = nonEmpty(environment["FITBASE_GOOGLE_REQUIRE_NONCE"]) {
            switch value.lowercased() {
            case "true", "1", "yes": configuration.googleRequiresNonce = true
            case "false", "0", "no": configuration.googleRequiresNonce = false
            default:
                throw ConfigurationError(setting: "google-require-nonce", source: "FITBASE_GOOGLE_REQUIRE_NONCE", value: value, expected: "true or false")
            }
        }
        configuration.appleTeamID = nonEmpty(environment["FITBASE_APPLE_TEAM_ID"])
        configuration.appleKeyID = nonEmpty(environment["FITBASE_APPLE_KEY_ID"])
        configuration.applePrivateKeyFile = nonEmpty(environment["FITBASE_APPLE_PRIVATE_KEY_FILE"])
        let keySettings = [configuration.appleTeamID, configuration.appleKeyID, configuration.applePrivateKeyFile]
        if keySettings.contains(where: { $0 != nil }) && keySettings.contains(where: { $0 == nil }) {
            throw ConfigurationError(
                setting: "apple-key", source: "FITBASE_APPLE_TEAM_ID / FITBASE_APPLE_KEY_ID / FITBASE_APPLE_PRIVATE_KEY_FILE",
                value: "partly set", expected: "all three set, or none"
            )
        }
        configuration.masterKey = nonEmpty(environment["FITBASE_MASTER_KEY"])
        configuration.masterKeyFile = nonEmpty(environment["FITBASE_MASTER_KEY_FILE"])
        if let value = nonEmpty(environment["FITBASE_ALLOW_GENERATED_MASTER_KEY"]) {
            switch value.lowercased() {
            case "true", "1", "yes": configuration.allowsGeneratedMasterKey = true
            case "false", "0", "no": configuration.allowsGeneratedMasterKey = false
            default:
                throw ConfigurationError(
                    setting: "allow-generated-master-key", source: "FITBASE_ALLOW_GENERATED_MASTER_KEY", value: value, expected: "true or false")
            }
        }
        return configuration
    }

    private static func list(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }
}

import Foundation

/// Whether and where `GET /metrics` is served (see ``MetricsFeature``).
///
/// | setting | flag | environment | default |
/// |---|---|---|---|
/// | bearer token a scraper sends | — | `FITBASE_METRICS_TOKEN` | unset: `/metrics` on the API's port answers 404 |
/// | a port of its own for `/metrics` (same host as the API) | `--metrics-port` | `FITBASE_METRICS_PORT` | unset: no metrics port |
///
/// Metrics are off unless one of them is set. On its own port `/metrics` asks for the token too when one is set; with
/// no token it answers whoever reaches that port (bind it where only the scraper does).
public struct MetricsConfiguration: Sendable, Equatable {
    /// The bearer token `/metrics` requires; `nil`: the API's port does not serve metrics.
    public var token: String?
    /// The port of the metrics server; `nil`: none. `0` picks a free one (printed at start).
    public var port: Int?

    /// Shortest token accepted: a scraper's secret, not a password someone types.
    static let minimumTokenLength = 16

    public init(token: String? = nil, port: Int? = nil) {
        self.token = token
        self.port = port
    }

    /// Whether metrics are served anywhere.
    public var isEnabled: Bool { token != nil || port != nil }

    /// Reads `FITBASE_METRICS_TOKEN` and the port (`--metrics-port` over `FITBASE_METRICS_PORT`).
    static func resolve(portFlag: String?, environment: [String: String]) throws(ConfigurationError) -> MetricsConfiguration {
        var configuration = MetricsConfiguration()
        if let text = environment["FITBASE_METRICS_TOKEN"] {
            let token = text.trimmingCharacters(in: .whitespaces)
            guard token.count >= minimumTokenLength, token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
                throw ConfigurationError(
                    setting: "metrics-token", source: "FITBASE_METRICS_TOKEN", value: "(\(text.count) characters)",
                    expected: "at least \(minimumTokenLength) printable ASCII characters without spaces (e.g. openssl rand -hex 32)"
                )
            }
            configuration.token = token
        }
        let port = portFlag.map { ($0, "--metrics-port") } ?? environment["FITBASE_METRICS_PORT"].map { ($0, "FITBASE_METRICS_PORT") }
        if let (text, source) = port {
            guard let parsed = Int(text.trimmingCharacters(in: .whitespaces)), (0...65_535).contains(parsed) else {
                throw ConfigurationError(setting: "metrics-port", source: source, value: text, expected: "an integer from 0 to 65535")
            }
            configuration.port = parsed
        }
        return configuration
    }
}

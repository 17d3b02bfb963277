import Crypto
import Foundation
import NIOSSL

/// How the server reaches Apple Push Notification service (``APNsProvider``), from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_APNS_TEAM_ID` | the Apple Developer team id (10 letters and digits): the provider tokens' `iss` | — |
/// | `FITBASE_APNS_KEY_ID` | the id of the APNs auth key (10 letters and digits): the provider tokens' `kid` | — |
/// | `FITBASE_APNS_KEY_FILE` | path of that key's `.p8` file (a P-256 private key in PKCS#8 PEM, as Apple issues it) | — |
/// | `FITBASE_APNS_TOPIC` | the app's bundle id: the `apns-topic` of pushes that name none | — |
///
/// All four or none: with none the server logs pushes instead of sending them (``LogPushProvider``); with some but not
/// all, or one that is invalid, start-up stops with an error naming the variable.
///
/// For tests and benchmarks only — a production deployment sets neither:
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_APNS_TEST_GATEWAY_URL` | `https://host:port` of a fake APNs: pushes for both environments go there | Apple's two gateways |
/// | `FITBASE_APNS_TEST_CA_FILE` | PEM file of the CA certificates the client then trusts, **instead of** the system's roots (only with the gateway URL) | the system's roots |
///
/// Without `FITBASE_APNS_TEST_CA_FILE` the client trusts the system's roots only, whatever the gateway: there is no
/// setting that turns certificate checks off.
package struct APNsConfiguration: Sendable {
    /// Apple's gateway for TestFlight and App Store builds.
    package static let productionGateway = "https://api.push.apple.com"
    /// Apple's gateway for development builds.
    package static let sandboxGateway = "https://api.sandbox.push.apple.com"

    package var teamID: String
    package var keyID: String
    /// The APNs auth key; it signs the provider tokens.
    package var privateKey: P256.Signing.PrivateKey
    /// `apns-topic` of a push whose message names no topic.
    package var defaultTopic: String
    /// Base URL (scheme, host, port) pushes for ``PushEnvironment/production`` go to.
    package var productionGatewayURL: String
    /// Base URL pushes for ``PushEnvironment/sandbox`` go to.
    package var sandboxGatewayURL: String
    /// `nil`: the system's roots. Otherwise the only certificates the gateway's chain may end in (tests).
    package var trustRoots: [NIOSSLCertificate]?

    package init(
        teamID: String, keyID: String, privateKey: P256.Signing.PrivateKey, defaultTopic: String,
        productionGatewayURL: String = productionGateway, sandboxGatewayURL: String = sandboxGateway,
        trustRoots: [NIOSSLCertificate]? = nil
    ) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
        self.defaultTopic = defaultTopic
        self.productionGatewayURL = productionGatewayURL
        self.sandboxGatewayURL = sandboxGatewayURL
        self.trustRoots = trustRoots
    }

    /// The gateway of `environment`.
    func gatewayURL(for environment: PushEnvironment) -> String {
        switch environment {
        case .production: productionGatewayURL
        case .sandbox: sandboxGatewayURL
        }
    }

    /// The configuration the environment asks for; `nil` when no `FITBASE_APNS_*` variable is set (or all are empty).
    ///
    /// Errors name the variable; the key file's contents never appear in them.
    package init?(environment: [String: String]) throws(ConfigurationError) {
        func value(_ name: String) -> String? {
            guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        let required = ["FITBASE_APNS_TEAM_ID", "FITBASE_APNS_KEY_ID", "FITBASE_APNS_KEY_FILE", "FITBASE_APNS_TOPIC"]
        let testOnly = ["FITBASE_APNS_TEST_GATEWAY_URL", "FITBASE_APNS_TEST_CA_FILE"]
        guard (required + testOnly).contains(where: { value($0) != nil }) else { return nil }
        let missing = required.filter { value($0) == nil }
        guard missing.isEmpty else {
            throw ConfigurationError(
                setting: "apns", source: missing.joined(separator: " / "), value: "",
                expected: "all four of \(required.joined(separator: ", ")) to send pushes through APNs, or none of them"
            )
        }
        // Checked above: every required value is set.
        let teamID = value("FITBASE_APNS_TEAM_ID") ?? ""
        let keyID = value("FITBASE_APNS_KEY_ID") ?? ""
        let keyFile = value("FITBASE_APNS_KEY_FILE") ?? ""
        let topic = value("FITBASE_APNS_TOPIC") ?? ""

        guard Self.isAppleIdentifier(teamID) else {
            throw ConfigurationError(
                setting: "apns-team-id", source: "FITBASE_APNS_TEAM_ID", value: teamID,
                expected: "the 10-character team id of the Apple Developer account (upper-case letters and digits)"
            )
        }
        guard Self.isAppleIdentifier(keyID) else {
            throw ConfigurationError(
                setting: "apns-key-id", source: "FITBASE_APNS_KEY_ID", value: keyID,
                expected: "the 10-character id of the APNs auth key (upper-case letters and digits)"
            )
        }
        guard let pem = FileManager.default.contents(atPath: keyFile) else {
            throw ConfigurationError(
                setting: "apns-key-file", source: "FITBASE_APNS_KEY_FILE", value: keyFile, expected: "a readable .p8 file"
            )
        }
        guard let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self)) else {
            throw ConfigurationError(
                setting: "apns-key-file", source: "FITBASE_APNS_KEY_FILE", value: keyFile,
                expected: "the APNs auth key: a P-256 private key in PEM (the .p8 file Apple issues)"
            )
        }
        guard Self.isTopic(topic) else {
            throw ConfigurationError(
                setting: "apns-topic", source: "FITBASE_APNS_TOPIC", value: topic,
                expected: "the app's bundle id, such as com.example.fitness"
            )
        }
        self.init(teamID: teamID, keyID: keyID, privateKey: privateKey, defaultTopic: topic)

        let gateway = value("FITBASE_APNS_TEST_GATEWAY_URL")
        if let gateway {
            guard let url = Self.gatewayURL(parsing: gateway) else {
                throw ConfigurationError(
                    setting: "apns-test-gateway-url", source: "FITBASE_APNS_TEST_GATEWAY_URL", value: gateway,
                    expected: "https://host:port of a fake APNs, without a path (tests only)"
                )
            }
            productionGatewayURL = url
            sandboxGatewayURL = url
        }
        if let caFile = value("FITBASE_APNS_TEST_CA_FILE") {
            guard gateway != nil else {
                throw ConfigurationError(
                    setting: "apns-test-ca-file", source: "FITBASE_APNS_TEST_CA_FILE", value: caFile,
                    expected: "no value unless FITBASE_APNS_TEST_GATEWAY_URL is set: Apple's gateways are checked against the system's roots"
                )
            }
            guard let certificates = try? NIOSSLCertificate.fromPEMFile(caFile), !certificates.isEmpty else {
                throw ConfigurationError(
                    setting: "apns-test-ca-file", source: "FITBASE_APNS_TEST_CA_FILE", value: caFile,
                    expected: "a readable PEM file of one or more CA certificates (tests only)"
                )
            }
            trustRoots = certificates
        }
    }

    /// Apple's team and key ids: 10 upper-case ASCII letters and digits.
    static func isAppleIdentifier(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// A bundle id, possibly with Apple's suffixes (`.voip`, `.complication`): letters, digits, `.`, `-`, `_`.
    static func isTopic(_ text: String) -> Bool {
        (1...255).contains(text.utf8.count)
            && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
    }

    /// `https://host[:port]` normalised without a trailing slash; `nil` for anything else.
    private static func gatewayURL(parsing text: String) -> String? {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "https",
            let host = components.host, !host.isEmpty, components.user == nil, components.query == nil,
            components.fragment == nil, ["", "/"].contains(components.path),
            components.port.map({ (1...65_535).contains($0) }) ?? true
        else { return nil }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}

import Crypto
import FitBaseFakeAPNs
import Foundation
import Logging
import NIOSSL
import Synchronization
import Testing

@testable import FitBaseServer

/// The APNs settings read from the environment, each refusal naming its variable.
extension APNsProviderTests {
    @Test func noSettingsMeansNoAPNs() throws {
        #expect(try APNsConfiguration(environment: [:]) == nil)
        #expect(try APNsConfiguration(environment: ["FITBASE_APNS_TOPIC": "  "]) == nil)
    }

    @Test func settingsFromTheEnvironment() throws {
        let keyFile = try temporaryFile(key.pemRepresentation)
        let configuration = try #require(try APNsConfiguration(environment: environment(keyFile: keyFile)))
        #expect(configuration.teamID == Self.teamID && configuration.keyID == Self.keyID && configuration.defaultTopic == Self.topic)
        #expect(configuration.privateKey.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(configuration.productionGatewayURL == "https://api.push.apple.com")
        #expect(configuration.sandboxGatewayURL == "https://api.sandbox.push.apple.com")
        #expect(configuration.trustRoots == nil)

                var test = environment(keyFile: keyFile)
        test["FITBASE_APNS_TEST_GATEWAY_URL"] = "https://127.0.0.1:8443/"
        test["FITBASE_APNS_TEST_CA_FILE"] = try temporaryFile(SMTPTestCertificates().rootPEM)
        let testConfiguration = try #require(try APNsConfiguration(environment: test))
        #expect(testConfiguration.productionGatewayURL == "https://127.0.0.1:8443")
        #expect(testConfiguration.sandboxGatewayURL == "https://127.0.0.1:8443")
        #expect(testConfiguration.trustRoots?.count == 1)
    }

    @Test func partialSettingsNameTheMissingVariables() throws {
        let keyFile = try temporaryFile(key.pemRepresentation)
        var partial = environment(keyFile: keyFile)
        partial["FITBASE_APNS_KEY_ID"] = nil
        partial["FITBASE_APNS_TOPIC"] = ""
        let error = try #require(throws: ConfigurationError.self) { try APNsConfiguration(environment: partial) }
        #expect(error.source == "FITBASE_APNS_KEY_ID / FITBASE_APNS_TOPIC")

        let onlyTest = ["FITBASE_APNS_TEST_GATEWAY_URL": "https://127.0.0.1:8443"]
        let testError = try #require(throws: ConfigurationError.self) { try APNsConfiguration(environment: onlyTest) }
        #expect(testError.source.contains("FITBASE_APNS_TEAM_ID"))
    }

    @Test func invalidSettingsNameTheirVariable() throws {
        let keyFile = try temporaryFile(key.pemRepresentation)
        let notAKey = try temporaryFile("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n")
        let cases: [(String, String, String)] = [
            ("FITBASE_APNS_TEAM_ID", "team-1", "FITBASE_APNS_TEAM_ID"),
            ("FITBASE_APNS_KEY_ID", "ABC", "FITBASE_APNS_KEY_ID"),
            ("FITBASE_APNS_KEY_FILE", "/nonexistent/AuthKey.p8", "FITBASE_APNS_KEY_FILE"),
            ("FITBASE_APNS_KEY_FILE", notAKey, "FITBASE_APNS_KEY_FILE"),
            ("FITBASE_APNS_TOPIC", "com.example app", "FITBASE_APNS_TOPIC"),
            ("FITBASE_APNS_TEST_GATEWAY_URL", "http://127.0.0.1:8443", "FITBASE_APNS_TEST_GATEWAY_URL"),
            ("FITBASE_APNS_TEST_GATEWAY_URL", "https://127.0.0.1:8443/3/device", "FITBASE_APNS_TEST_GATEWAY_URL"),
            ("FITBASE_APNS_TEST_CA_FILE", keyFile, "FITBASE_APNS_TEST_CA_FILE"),
        ]
        for (variable, value, named) in cases {
            var settings = environment(keyFile: keyFile)
            if variable == "FITBASE_APNS_TEST_CA_FILE" { settings["FITBASE_APNS_TEST_GATEWAY_URL"] = "https://127.0.0.1:8443" }
            settings[variable] = value
            let error = try #require(throws: ConfigurationError.self, "\(variable)=\(value)") { try APNsConfiguration(environment: settings) }
            #expect(error.source == named, "\(variable)=\(value)")
        }
        // A CA file without the test gateway: Apple's gateways are always checked against the system's roots.
        var caAlone = environment(keyFile: keyFile)
        caAlone["FITBASE_APNS_TEST_CA_FILE"] = try temporaryFile(SMTPTestCertificates().rootPEM)
        let error = try #require(throws: ConfigurationError.self) { try APNsConfiguration(environment: caAlone) }
        #expect(error.source == "FITBASE_APNS_TEST_CA_FILE")
    }
}

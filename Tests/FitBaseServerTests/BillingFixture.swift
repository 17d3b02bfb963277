import Crypto
import FitBaseServer
import Foundation

/// The billing set-up every app built by the tests shares: an App Store signing chain whose root is written to a
/// file the server is configured to trust, the Sandbox environment and Stripe endpoint secrets.
enum BillingFixture {
    /// The chain that signs the tests' App Store data (made once per test process).
    static let signer: AppStoreTestSigner = {
        do { return try AppStoreTestSigner() } catch { fatalError("cannot build the test App Store chain: \(error)") }
    }()

    /// The Stripe endpoint secrets the server accepts (the second one: a rotation in progress).
    static let stripeSecrets = ["whsec_fitbase_test_current", "whsec_fitbase_test_next"]

    /// Sandbox, the test bundle id, the test root written to a temp file, both Stripe secrets.
    static func configuration() throws -> BillingConfiguration {
        BillingConfiguration(
            appStoreBundleID: AppStoreTestSigner.bundleID, appStoreEnvironment: "Sandbox",
            appStoreRootCertificateFiles: [try rootFile()], stripeWebhookSecrets: stripeSecrets
        )
    }

    /// The signer's root as a DER file (written once; parallel tests may race to write the same bytes).
    private static func rootFile() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-test-appstore-root-\(ProcessInfo.processInfo.processIdentifier).der")
        if !FileManager.default.fileExists(atPath: url.path) {
            try Data(try AppStoreTestSigner.derBytes(signer.rootCertificate)).write(to: url, options: .atomic)
        }
        return url.path
    }

    /// `Stripe-Signature` for `payload` as Stripe computes it: `t=…,v1=hex(HMAC-SHA256(secret, "t.payload"))`.
    static func stripeSignature(_ payload: Data, secret: String = stripeSecrets[0], at time: Date = .now) -> String {
        let timestamp = Int(time.timeIntervalSince1970)
        let signed = Data("\(timestamp).".utf8) + payload
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(timestamp),v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// A Stripe event's JSON.
    static func stripeEvent(_ type: String, id: String = "evt_\(UUID().uuidString.prefix(12))", created: Date = .now, object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: [
            "id": id, "object": "event", "type": type, "created": Int(created.timeIntervalSince1970), "livemode": false,
            "api_version": "2024-06-20", "data": ["object": object],
        ])
    }
}

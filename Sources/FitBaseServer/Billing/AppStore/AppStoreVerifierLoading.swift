import Foundation
import X509

extension AppStoreSignedDataVerifier {
    /// The verifier `configuration` describes, `nil` when App Store purchases are off (no bundle id). Unreadable root
    /// certificates stop start-up with the setting named.
    static func load(_ configuration: BillingConfiguration) throws(ConfigurationError) -> AppStoreSignedDataVerifier? {
        guard let bundleID = configuration.appStoreBundleID else { return nil }
        let roots: [Certificate]
        do {
            roots = configuration.appStoreRootCertificateFiles.isEmpty
                ? [try appleRootCAG3()] : try loadRootCertificates(paths: configuration.appStoreRootCertificateFiles)
        } catch {
            throw ConfigurationError(
                setting: "appstore-root-certs", source: "FITBASE_APPSTORE_ROOT_CERTS",
                value: configuration.appStoreRootCertificateFiles.joined(separator: ","), expected: "readable DER or PEM certificates (\(error))"
            )
        }
        return AppStoreSignedDataVerifier(
            rootCertificates: roots, bundleID: bundleID,
            environment: configuration.appStoreEnvironment == "Sandbox" ? .sandbox : .production,
            appAppleID: configuration.appStoreAppAppleID, allowXcode: configuration.appStoreAllowsXcode
        )
    }
}

import FitBaseCore
import Crypto
import Foundation
import SwiftASN1
// `RFC5280Policy(fixedExpiryValidationTime:)` is the supported way to check validity at a given date (the public
// `init(validationTime:)` is deprecated in its favour).
@_spi(FixedExpiryValidationTime) import X509

/// Why a signed App Store payload was refused.
enum AppStoreVerificationError: Error, Equatable, CustomStringConvertible {
    /// Not three base64url parts, header or payload not JSON, or a required field missing.
    case malformed
    /// The header's `alg` is not `ES256`.
    case unsupportedAlgorithm
    /// `x5c` missing or not three certificates, or the chain does not lead to a trusted root with Apple's markers,
    /// valid at the payload's `signedDate`.
    case invalidCertificateChain
    /// The signature is not the leaf certificate's ES256 signature of header and payload.
    case invalidSignature
    case wrongBundleID
    case wrongEnvironment
    case wrongAppAppleID
    /// Xcode or LocalTesting data (not signed by the App Store) while the server does not accept it.
    case xcodeEnvironmentNotAllowed

    /// Stable snake_case code for problem+json, e.g. `appstore_invalid_signature`.
    var code: ProblemCode {
        switch self {
        case .malformed: .appstoreMalformed
        case .unsupportedAlgorithm: .appstoreUnsupportedAlgorithm
        case .invalidCertificateChain: .appstoreInvalidCertificateChain
        case .invalidSignature: .appstoreInvalidSignature
        case .wrongBundleID: .appstoreWrongBundleId
        case .wrongEnvironment: .appstoreWrongEnvironment
        case .wrongAppAppleID: .appstoreWrongAppAppleId
        case .xcodeEnvironmentNotAllowed: .appstoreXcodeEnvironmentNotAllowed
        }
    }

    var description: String {
        switch self {
        case .malformed: "The signed App Store data is not a well-formed JWS of the expected payload."
        case .unsupportedAlgorithm: "The signed App Store data does not use ES256."
        case .invalidCertificateChain: "The signing certificate chain is not a valid App Store chain to a trusted root."
        case .invalidSignature: "The signature of the App Store data does not verify."
        case .wrongBundleID: "The App Store data is for another app (bundle ID)."
        case .wrongEnvironment: "The App Store data is from another environment."
        case .wrongAppAppleID: "The App Store data is for another app (app Apple ID)."
        case .xcodeEnvironmentNotAllowed: "Unsigned Xcode or LocalTesting App Store data is not accepted."
        }
    }
}

/// A trust-root file that could not be used; names the file.
enum AppStoreRootCertificateError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String)
    case notACertificate(path: String)

    var path: String {
        switch self {
        case .unreadable(let path), .notACertificate(let path): path
        }
    }

    var description: String {
        switch self {
        case .unreadable(let path): "Cannot read the App Store root certificate file \(path)."
        case .notACertificate(let path): "The App Store root certificate file \(path) holds no DER or PEM certificate."
        }
    }
}

/// Verifies and decodes data signed by the App Store (transactions, renewal info, server notifications V2) as
/// Apple's App Store Server Library `SignedDataVerifier` does offline: the `x5c` chain must lead to one of our roots
/// with Apple's certificate markers, valid at the payload's `signedDate`, and the payload must be for our app.
struct AppStoreSignedDataVerifier: Sendable {
    private let roots: CertificateStore
    private let bundleID: String
    private let environment: AppStoreEnvironment
    private let appAppleID: Int64?
    private let allowXcode: Bool

    /// - Parameters:
    ///   - rootCertificates: the only trusted roots (normally ``appleRootCAG3()``); the root sent in `x5c` is ignored.
    ///   - appAppleID: required to accept Production notifications; when `nil` they are refused (`wrongAppAppleID`).
    ///   - allowXcode: accept Xcode and LocalTesting data unsigned, in any configured environment (development only).
    init(rootCertificates: [Certificate], bundleID: String, environment: AppStoreEnvironment, appAppleID: Int64?, allowXcode: Bool) {
        self.roots = CertificateStore(rootCertificates)
        self.bundleID = bundleID
        self.environment = environment
        self.appAppleID = appAppleID
        self.allowXcode = allowXcode
    }

    /// Loads trust roots from DER or PEM files (a PEM file may hold several certificates).
    static func loadRootCertificates(paths: [String]) throws(AppStoreRootCertificateError) -> [Certificate] {
        var certificates: [Certificate] = []
        for path in paths {
            guard let contents = FileManager.default.contents(atPath: path) else { throw .unreadable(path: path) }
            do {
                if let text = String(data: contents, encoding: .utf8), text.contains("-----BEGIN") {
                    let documents = try PEMDocument.parseMultiple(pemString: text).filter { $0.discriminator == "CERTIFICATE" }
                    guard !documents.isEmpty else { throw AppStoreRootCertificateError.notACertificate(path: path) }
                    certificates += try documents.map { try Certificate(pemDocument: $0) }
                } else {
                    certificates.append(try Certificate(derEncoded: Array(contents)))
                }
            } catch {
                throw .notACertificate(path: path)
            }
        }
        return certificates
    }

    /// The bundled real Apple Root CA - G3, the root of every App Store signature.
    static func appleRootCAG3() throws(AppStoreRootCertificateError) -> Certificate {
        guard let url = Bundle.module.url(forResource: "AppleRootCA-G3", withExtension: "cer") else {
            throw .unreadable(path: "AppleRootCA-G3.cer (bundled resource)")
        }
        guard let root = try loadRootCertificates(paths: [url.path]).first else { throw .notACertificate(path: url.path) }
        return root
    }

    /// Verifies a `signedTransactionInfo` / `signedTransaction` and checks its bundle ID and environment.
    func verifyTransaction(_ jws: String) async throws(AppStoreVerificationError) -> AppStoreTransaction {
        let transaction = try await verifiedPayload(jws, as: AppStoreTransaction.self)
        guard transaction.bundleId == bundleID else { throw .wrongBundleID }
        try checkEnvironment(transaction.environment)
        return transaction
    }

    /// Verifies a `signedRenewalInfo` and checks its environment (it carries no bundle ID).
    func verifyRenewalInfo(_ jws: String) async throws(AppStoreVerificationError) -> AppStoreRenewalInfo {
        let renewalInfo = try await verifiedPayload(jws, as: AppStoreRenewalInfo.self)
        try checkEnvironment(renewalInfo.environment)
        return renewalInfo
    }

    /// Verifies a notification's `signedPayload` and checks the app and environment in its `data` (or `summary`).
    /// The JWS embedded in `data` are not verified here: pass them to ``verifyTransaction(_:)`` and
    /// ``verifyRenewalInfo(_:)``.
    func verifyNotification(_ signedPayload: String) async throws(AppStoreVerificationError) -> AppStoreNotification {
        let notification = try await verifiedPayload(signedPayload, as: AppStoreNotification.self)
        let app = notification.app
        guard app?.bundleID == bundleID else { throw .wrongBundleID }
        try checkEnvironment(app?.environment)
        // Past the environment check, a Production payload means we are configured for Production.
        if app?.environment == .production {
            guard let appAppleID, app?.appAppleID == appAppleID else { throw .wrongAppAppleID }
        }
        return notification
    }

    // MARK: - Steps

    /// Format, algorithm, Xcode gate, certificate chain, signature; the callers then check the claims.
    private func verifiedPayload<Payload: AppStoreSignedPayload>(
        _ jws: String, as type: Payload.Type
    ) async throws(AppStoreVerificationError) -> Payload {
        let token = try CompactJWS(jws)
        guard let payload = try? JSONDecoder().decode(Payload.self, from: token.payload) else { throw .malformed }
        guard token.header.alg == "ES256" else { throw .unsupportedAlgorithm }
        if let environment = payload.claimedEnvironment, environment.isUnsignedTesting {
            // Xcode and LocalTesting data is not signed by the App Store: there is nothing to verify.
            guard allowXcode else { throw .xcodeEnvironmentNotAllowed }
            return payload
        }
        let leaf = try await verifiedLeaf(x5c: token.header.x5c, at: payload.signedDate)
        guard let key = P256.Signing.PublicKey(leaf.publicKey),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
            key.isValidSignature(signature, for: token.signingInput)
        else { throw .invalidSignature }
        return payload
    }

    /// The leaf of `x5c` once `[leaf, intermediate, root]` chains to one of our roots through the intermediate,
    /// with Apple's markers and every certificate valid at `validationTime`.
    private func verifiedLeaf(x5c: [String]?, at validationTime: Date) async throws(AppStoreVerificationError) -> Certificate {
        guard let x5c, x5c.count == 3,
            let leafDER = Data(base64Encoded: x5c[0]), let intermediateDER = Data(base64Encoded: x5c[1]),
            let leaf = try? Certificate(derEncoded: Array(leafDER)),
            let intermediate = try? Certificate(derEncoded: Array(intermediateDER))
        else { throw .invalidCertificateChain }
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy(fixedExpiryValidationTime: validationTime)
            AppStoreCertificateMarkersPolicy()
        }
        guard case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) else {
            throw .invalidCertificateChain
        }
        return leaf
    }

    private func checkEnvironment(_ claimed: AppStoreEnvironment?) throws(AppStoreVerificationError) {
        guard let claimed else { throw .wrongEnvironment }
        guard claimed == environment || (allowXcode && claimed.isUnsignedTesting) else { throw .wrongEnvironment }
    }
}

/// Apple's markers: the leaf is an App Store receipt signer and the intermediate is Apple's WWDR CA; the chain is
/// exactly leaf, intermediate, root.
private struct AppStoreCertificateMarkersPolicy: VerifierPolicy {
    static let receiptSignerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let wwdrIntermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard chain.count == 3 else { return .failsToMeetPolicy(reason: "App Store chains have three certificates") }
        guard chain[0].extensions.contains(where: { $0.oid == Self.receiptSignerOID }) else {
            return .failsToMeetPolicy(reason: "The leaf is not an App Store receipt signer")
        }
        guard chain[1].extensions.contains(where: { $0.oid == Self.wwdrIntermediateOID }) else {
            return .failsToMeetPolicy(reason: "The intermediate is not Apple's WWDR CA")
        }
        return .meetsPolicy
    }
}

/// The three parts of a compact JWS, decoded.
private struct CompactJWS {
    struct Header: Decodable {
        var alg: String
        var x5c: [String]?
    }

    var header: Header
    var payload: Data
    var signature: Data
    /// The ASCII `header.payload` that was signed.
    var signingInput: [UInt8]

    init(_ text: String) throws(AppStoreVerificationError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Data(base64URLEncoded: String(parts[0])),
            let payload = Data(base64URLEncoded: String(parts[1])),
            let signature = Data(base64URLEncoded: String(parts[2])),
            let header = try? JSONDecoder().decode(Header.self, from: headerData)
        else { throw .malformed }
        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInput = Array(text.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    }
}

/// A payload the App Store signs: when it was signed and which environment it claims.
private protocol AppStoreSignedPayload: Decodable {
    var signedDate: Date { get }
    var claimedEnvironment: AppStoreEnvironment? { get }
}

extension AppStoreTransaction: AppStoreSignedPayload {
    fileprivate var claimedEnvironment: AppStoreEnvironment? { environment }
}

extension AppStoreRenewalInfo: AppStoreSignedPayload {
    fileprivate var claimedEnvironment: AppStoreEnvironment? { environment }
}

extension AppStoreNotification: AppStoreSignedPayload {
    /// Which app and environment the notification is about: from `data`, else `summary`.
    fileprivate var app: (bundleID: String, environment: AppStoreEnvironment, appAppleID: Int64?)? {
        if let data { return (data.bundleId, data.environment, data.appAppleId) }
        if let summary { return (summary.bundleId, summary.environment, summary.appAppleId) }
        return nil
    }

    fileprivate var claimedEnvironment: AppStoreEnvironment? { app?.environment }
}

extension AppStoreEnvironment {
    /// Xcode and LocalTesting: StoreKit testing data that the App Store did not sign.
    fileprivate var isUnsignedTesting: Bool { self == .xcode || self == .localTesting }
}

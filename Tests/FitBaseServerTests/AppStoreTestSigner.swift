import Crypto
import Foundation
import SwiftASN1
import X509

@testable import FitBaseServer

/// Signs App Store-style JWS with a throw-away chain shaped like Apple's: a root CA, an intermediate carrying the
/// WWDR marker and a leaf carrying the receipt-signer marker, all P-256. Each signer has its own keys, so a
/// verifier from ``verifier(bundleID:environment:appAppleID:allowXcode:)`` trusts only this signer. Every signer
/// uses the same certificate names: a second signer is an unrelated root that nevertheless looks alike.
struct AppStoreTestSigner: Sendable {
    /// What the header's `x5c` carries.
    enum CertificateChain: Sendable {
        /// `[leaf, intermediate, root]`, as Apple sends it.
        case full
        case omitted
        case certificates([Certificate])
    }

    static let bundleID = "com.example.train"
    static let productID = "com.train.pro.monthly"

    let rootCertificate: Certificate
    let intermediateCertificate: Certificate
    let leafCertificate: Certificate
    private let leafKey: P256.Signing.PrivateKey

    /// - Parameters:
    ///   - leafOID: give the leaf the receipt-signer marker (1.2.840.113635.100.6.11.1).
    ///   - intermediateOID: give the intermediate the WWDR marker (1.2.840.113635.100.6.2.1).
    ///   - leafValidity: the leaf's validity; by default, like the CAs, five years either side of now.
    init(leafOID: Bool = true, intermediateOID: Bool = true, leafValidity: ClosedRange<Date>? = nil) throws {
        let fiveYears: TimeInterval = 5 * 365 * 86_400
        let caValidity = Date().addingTimeInterval(-fiveYears)...Date().addingTimeInterval(fiveYears)
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("FitBase Test Root CA"); OrganizationName("FitBase Tests") }
        let intermediateName = try DistinguishedName { CommonName("FitBase Test WWDR CA"); OrganizationName("FitBase Tests") }
        let leafName = try DistinguishedName { CommonName("FitBase Test App Store Signer"); OrganizationName("FitBase Tests") }

        rootCertificate = try Self.certificate(
            subject: rootName, key: rootKey.publicKey, issuer: rootName, issuerKey: rootKey, validity: caValidity,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            }
        )
        intermediateCertificate = try Self.certificate(
            subject: intermediateName, key: intermediateKey.publicKey, issuer: rootName, issuerKey: rootKey, validity: caValidity,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if intermediateOID { Self.marker([1, 2, 840, 113635, 100, 6, 2, 1]) }
            }
        )
        leafCertificate = try Self.certificate(
            subject: leafName, key: leafKey.publicKey, issuer: intermediateName, issuerKey: intermediateKey,
            validity: leafValidity ?? caValidity,
            extensions: Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if leafOID { Self.marker([1, 2, 840, 113635, 100, 6, 11, 1]) }
            }
        )
        self.leafKey = leafKey
    }

    // MARK: Signing

    /// `payload` as JSON in a compact JWS signed ES256 by the leaf.
    func sign(_ payload: some Encodable, alg: String = "ES256", chain: CertificateChain = .full) throws -> String {
        try sign(payloadJSON: JSONEncoder().encode(payload), alg: alg, chain: chain)
    }

    /// A JSON object, for payloads the typed structs cannot express (extra fields, missing fields, odd values).
    func sign(json: [String: Any], alg: String = "ES256", chain: CertificateChain = .full) throws -> String {
        try sign(payloadJSON: JSONSerialization.data(withJSONObject: json), alg: alg, chain: chain)
    }

    /// A verifier trusting only this signer's root.
    func verifier(
        bundleID: String = AppStoreTestSigner.bundleID, environment: AppStoreEnvironment = .sandbox, appAppleID: Int64? = nil,
        allowXcode: Bool = false
    ) -> AppStoreSignedDataVerifier {
        AppStoreSignedDataVerifier(
            rootCertificates: [rootCertificate], bundleID: bundleID, environment: environment, appAppleID: appAppleID, allowXcode: allowXcode
        )
    }

    /// A signed notification whose `data` embeds `transaction` and `renewal`, each signed by this signer.
    func notification(
        type: String, subtype: String? = nil, uuid: String = UUID().uuidString, transaction: AppStoreTransaction? = nil,
        renewal: AppStoreRenewalInfo? = nil, signedDate: Date = Date(), bundleID: String = AppStoreTestSigner.bundleID,
        environment: AppStoreEnvironment = .sandbox, appAppleID: Int64? = nil, status: Int? = nil
    ) throws -> String {
        let data = AppStoreNotification.Payload(
            appAppleId: appAppleID, bundleId: bundleID, bundleVersion: "1", environment: environment,
            signedTransactionInfo: try transaction.map { try sign($0) }, signedRenewalInfo: try renewal.map { try sign($0) },
            status: status
        )
        return try sign(
            AppStoreNotification(
                notificationType: type, subtype: subtype, notificationUUID: uuid, version: "2.0",
                signedDateMilliseconds: signedDate.appStoreMilliseconds, data: data
            )
        )
    }

    // MARK: Payloads

    /// A monthly subscription bought now, expiring in 30 days; every other field is a `var` to change.
    static func transaction(
        productId: String = AppStoreTestSigner.productID, bundleId: String = AppStoreTestSigner.bundleID,
        environment: AppStoreEnvironment = .sandbox, originalTransactionId: String = "2000000000000001",
        transactionId: String = "2000000000000001", purchaseDate: Date = Date(),
        expiresDate: Date? = Date().addingTimeInterval(30 * 86_400), signedDate: Date = Date(), appAccountToken: UUID? = nil,
        type: String = "Auto-Renewable Subscription", offerType: Int? = nil, revocationDate: Date? = nil,
        revocationReason: Int? = nil
    ) -> AppStoreTransaction {
        AppStoreTransaction(
            originalTransactionId: originalTransactionId, transactionId: transactionId, webOrderLineItemId: "2000000000000101",
            bundleId: bundleId, productId: productId, subscriptionGroupIdentifier: "21000001",
            purchaseDateMilliseconds: purchaseDate.appStoreMilliseconds,
            originalPurchaseDateMilliseconds: purchaseDate.appStoreMilliseconds,
            expiresDateMilliseconds: expiresDate?.appStoreMilliseconds, quantity: 1, type: type, appAccountToken: appAccountToken,
            inAppOwnershipType: "PURCHASED", signedDateMilliseconds: signedDate.appStoreMilliseconds,
            revocationReason: revocationReason, revocationDateMilliseconds: revocationDate?.appStoreMilliseconds,
            offerType: offerType, environment: environment, storefront: "USA", storefrontId: "143441",
            transactionReason: "PURCHASE", currency: "USD", price: 9_990
        )
    }

    /// Renewal info of an auto-renewing monthly subscription renewing in 30 days.
    static func renewalInfo(
        productId: String = AppStoreTestSigner.productID, originalTransactionId: String = "2000000000000001",
        autoRenewStatus: Int = 1, environment: AppStoreEnvironment = .sandbox, signedDate: Date = Date(),
        renewalDate: Date? = Date().addingTimeInterval(30 * 86_400), expirationIntent: Int? = nil,
        isInBillingRetryPeriod: Bool? = false, gracePeriodExpiresDate: Date? = nil
    ) -> AppStoreRenewalInfo {
        AppStoreRenewalInfo(
            originalTransactionId: originalTransactionId, autoRenewProductId: productId, productId: productId,
            autoRenewStatus: autoRenewStatus, isInBillingRetryPeriod: isInBillingRetryPeriod, expirationIntent: expirationIntent,
            gracePeriodExpiresDateMilliseconds: gracePeriodExpiresDate?.appStoreMilliseconds,
            signedDateMilliseconds: signedDate.appStoreMilliseconds, environment: environment,
            recentSubscriptionStartDateMilliseconds: signedDate.appStoreMilliseconds,
            renewalDateMilliseconds: renewalDate?.appStoreMilliseconds
        )
    }

    // MARK: Helpers

    /// A certificate's DER bytes.
    static func derBytes(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    private func sign(payloadJSON: Data, alg: String, chain: CertificateChain) throws -> String {
        var header: [String: Any] = ["alg": alg]
        switch chain {
        case .full: header["x5c"] = try [leafCertificate, intermediateCertificate, rootCertificate].map(Self.base64DER)
        case .omitted: break
        case .certificates(let certificates): header["x5c"] = try certificates.map(Self.base64DER)
        }
        let signingInput = try JSONSerialization.data(withJSONObject: header).base64URLEncoded + "." + payloadJSON.base64URLEncoded
        let signature = try leafKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + signature.rawRepresentation.base64URLEncoded
    }

    private static func base64DER(_ certificate: Certificate) throws -> String {
        Data(try derBytes(certificate)).base64EncodedString()
    }

    /// One of Apple's marker extensions: non-critical, value ASN.1 NULL.
    private static func marker(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }

    private static func certificate(
        subject: DistinguishedName, key: P256.Signing.PublicKey, issuer: DistinguishedName, issuerKey: P256.Signing.PrivateKey,
        validity: ClosedRange<Date>, extensions: Certificate.Extensions
    ) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, issuer: issuer, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(issuerKey)
        )
    }
}

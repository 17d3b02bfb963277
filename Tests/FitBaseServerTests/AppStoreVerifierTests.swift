import FitBaseCore
import Foundation
import SwiftASN1
import Testing
import X509

@testable import FitBaseServer

@Suite struct AppStoreVerifierTests {
    let signer: AppStoreTestSigner

    init() throws {
        signer = try AppStoreTestSigner()
    }

    // MARK: Valid data

    @Test func validTransactionDecodesWithItsFields() async throws {
        let token = UUID()
        let transaction = AppStoreTestSigner.transaction(appAccountToken: token)
        let decoded = try await signer.verifier().verifyTransaction(signer.sign(transaction))
        #expect(decoded == transaction)
        #expect(decoded.productId == "com.train.pro.monthly")
        #expect(decoded.appAccountToken == token)
        #expect(decoded.environment == .sandbox)
        #expect(decoded.expiresDate == transaction.expiresDate)
    }

    @Test func appleShapedJSONDecodes() async throws {
        let jws = try signer.sign(json: [
            "originalTransactionId": "1", "transactionId": "2", "bundleId": "com.example.train", "productId": "com.train.pro.yearly",
            "purchaseDate": 1_700_000_000_123, "expiresDate": 1_731_536_000_000, "signedDate": 1_700_000_000_456,
            "type": "Some Future Type", "environment": "Sandbox", "price": 59_990, "currency": "EUR", "offerType": 4,
            "offerDiscountType": "FREE_TRIAL", "appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            "aFieldAppleAddsLater": ["nested": true],
        ])
        let decoded = try await signer.verifier().verifyTransaction(jws)
        #expect(decoded.purchaseDate == Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(decoded.expiresDate == Date(timeIntervalSince1970: 1_731_536_000))
        #expect(decoded.appAccountToken == UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
        #expect(decoded.type == "Some Future Type")
        #expect(decoded.offerType == 4)
        #expect(decoded.price == 59_990)
        #expect(decoded.originalPurchaseDate == nil)
    }

    @Test func renewalInfoDecodes() async throws {
        let renewal = AppStoreTestSigner.renewalInfo(autoRenewStatus: 0, expirationIntent: 1)
        let decoded = try await signer.verifier().verifyRenewalInfo(signer.sign(renewal))
        #expect(decoded == renewal)
        #expect(decoded.autoRenewStatus == 0)
    }

    @Test func notificationWithEmbeddedTransactionVerifiesAndDecodes() async throws {
        let transaction = AppStoreTestSigner.transaction()
        let renewal = AppStoreTestSigner.renewalInfo()
        let verifier = signer.verifier()
        let notification = try await verifier.verifyNotification(
            signer.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-1", transaction: transaction, renewal: renewal)
        )
        #expect(notification.notificationType == "SUBSCRIBED")
        #expect(notification.subtype == "INITIAL_BUY")
        #expect(notification.notificationUUID == "n-1")
        let data = try #require(notification.data)
        let signedTransaction = try #require(data.signedTransactionInfo)
        let signedRenewal = try #require(data.signedRenewalInfo)
        #expect(try await verifier.verifyTransaction(signedTransaction) == transaction)
        #expect(try await verifier.verifyRenewalInfo(signedRenewal) == renewal)
    }

    // MARK: Claims

    @Test func wrongBundleIsRefused() async throws {
        let jws = try signer.sign(AppStoreTestSigner.transaction(bundleId: "com.other.app"))
        await #expect(throws: AppStoreVerificationError.wrongBundleID) { try await signer.verifier().verifyTransaction(jws) }
        let notification = try signer.notification(type: "DID_RENEW", bundleID: "com.other.app")
        await #expect(throws: AppStoreVerificationError.wrongBundleID) { try await signer.verifier().verifyNotification(notification) }
    }

    @Test func wrongEnvironmentIsRefused() async throws {
        let production = signer.verifier(environment: .production, appAppleID: 1234)
        let transaction = try signer.sign(AppStoreTestSigner.transaction(environment: .sandbox))
        await #expect(throws: AppStoreVerificationError.wrongEnvironment) { try await production.verifyTransaction(transaction) }
        let renewal = try signer.sign(AppStoreTestSigner.renewalInfo(environment: .production))
        await #expect(throws: AppStoreVerificationError.wrongEnvironment) { try await signer.verifier().verifyRenewalInfo(renewal) }
        let notification = try signer.notification(type: "DID_RENEW", environment: .sandbox)
        await #expect(throws: AppStoreVerificationError.wrongEnvironment) { try await production.verifyNotification(notification) }
    }

    @Test func productionNotificationNeedsTheRightAppAppleID() async throws {
        let verifier = signer.verifier(environment: .production, appAppleID: 1234)
        let wrong = try signer.notification(type: "DID_RENEW", environment: .production, appAppleID: 999)
        await #expect(throws: AppStoreVerificationError.wrongAppAppleID) { try await verifier.verifyNotification(wrong) }
        let missing = try signer.notification(type: "DID_RENEW", environment: .production)
        await #expect(throws: AppStoreVerificationError.wrongAppAppleID) { try await verifier.verifyNotification(missing) }
        let right = try signer.notification(type: "DID_RENEW", environment: .production, appAppleID: 1234)
        #expect(try await verifier.verifyNotification(right).data?.appAppleId == 1234)
    }

    // MARK: Certificate chain

    @Test func leafWithoutReceiptSignerOIDIsRefused() async throws {
        let unmarked = try AppStoreTestSigner(leafOID: false)
        let jws = try unmarked.sign(AppStoreTestSigner.transaction())
        await #expect(throws: AppStoreVerificationError.invalidCertificateChain) { try await unmarked.verifier().verifyTransaction(jws) }
    }

    @Test func intermediateWithoutWWDROIDIsRefused() async throws {
        let unmarked = try AppStoreTestSigner(intermediateOID: false)
        let jws = try unmarked.sign(AppStoreTestSigner.transaction())
        await #expect(throws: AppStoreVerificationError.invalidCertificateChain) { try await unmarked.verifier().verifyTransaction(jws) }
    }

    @Test func chainToAnUnknownRootIsRefused() async throws {
        // Same certificate names, different keys: only the trusted root's key counts, never x5c's own root.
        let other = try AppStoreTestSigner()
        let jws = try other.sign(AppStoreTestSigner.transaction())
        await #expect(throws: AppStoreVerificationError.invalidCertificateChain) { try await signer.verifier().verifyTransaction(jws) }
    }

    @Test func leafValidityIsCheckedAtSignedDate() async throws {
        let now = Date()
        let day: TimeInterval = 86_400
        let oldSigner = try AppStoreTestSigner(leafValidity: now.addingTimeInterval(-60 * day)...now.addingTimeInterval(-30 * day))
        let signedNow = try oldSigner.sign(AppStoreTestSigner.transaction(signedDate: now))
        await #expect(throws: AppStoreVerificationError.invalidCertificateChain) { try await oldSigner.verifier().verifyTransaction(signedNow) }
        let signedThen = try oldSigner.sign(AppStoreTestSigner.transaction(signedDate: now.addingTimeInterval(-45 * day)))
        #expect(try await oldSigner.verifier().verifyTransaction(signedThen).productId == AppStoreTestSigner.productID)
    }

    @Test func missingX5CIsRefused() async throws {
        let jws = try signer.sign(AppStoreTestSigner.transaction(), chain: .omitted)
        await #expect(throws: AppStoreVerificationError.invalidCertificateChain) { try await signer.verifier().verifyTransaction(jws) }
    }

    @Test func x5cWithTwoCertificatesIsRefused() async throws {
        let chain = AppStoreTestSigner.CertificateChain.certificates([signer.leafCertificate, signer.intermediateCertificate])
        let jws = try signer.sign(AppStoreTestSigner.transaction(), chain: chain)
        await #expect(throws: AppStoreVerificationError.invalidCertificateChain) { try await signer.verifier().verifyTransaction(jws) }
    }

    @Test func x5cThatIsNotACertificateIsRefused() async throws {
        let jws = try signer.sign(AppStoreTestSigner.transaction())
        let parts = jws.split(separator: ".").map(String.init)
        let header = #"{"alg":"ES256","x5c":["AAAA","AAAA","AAAA"]}"#
        let forged = Data(header.utf8).base64URLEncoded + "." + parts[1] + "." + parts[2]
        await #expect(throws: AppStoreVerificationError.invalidCertificateChain) { try await signer.verifier().verifyTransaction(forged) }
    }

    // MARK: Signature and format

    @Test func tamperedPayloadIsRefused() async throws {
        let parts = try signer.sign(AppStoreTestSigner.transaction()).split(separator: ".").map(String.init)
        let payloadJSON = try #require(Data(base64URLEncoded: parts[1]))
        var payload = try #require(JSONSerialization.jsonObject(with: payloadJSON) as? [String: Any])
        payload["productId"] = "com.train.pro.lifetime"
        let tampered = parts[0] + "." + (try JSONSerialization.data(withJSONObject: payload)).base64URLEncoded + "." + parts[2]
        await #expect(throws: AppStoreVerificationError.invalidSignature) { try await signer.verifier().verifyTransaction(tampered) }
    }

    @Test func signatureOfAnotherPayloadIsRefused() async throws {
        let genuine = try signer.sign(AppStoreTestSigner.transaction()).split(separator: ".")
        let other = try signer.sign(AppStoreTestSigner.transaction(productId: "com.train.pro.yearly")).split(separator: ".")
        let swapped = [genuine[0], genuine[1], other[2]].joined(separator: ".")
        await #expect(throws: AppStoreVerificationError.invalidSignature) { try await signer.verifier().verifyTransaction(swapped) }
        // (Two characters fewer: 84, a whole number of bytes, so the signature still decodes, one byte short.)
        let truncated = [genuine[0], genuine[1], genuine[2].dropLast(2)].joined(separator: ".")
        await #expect(throws: AppStoreVerificationError.invalidSignature) { try await signer.verifier().verifyTransaction(truncated) }
    }

    @Test(arguments: ["HS256", "none", "ES384", "RS256"])
    func otherAlgorithmsAreRefused(alg: String) async throws {
        let jws = try signer.sign(AppStoreTestSigner.transaction(), alg: alg)
        await #expect(throws: AppStoreVerificationError.unsupportedAlgorithm) { try await signer.verifier().verifyTransaction(jws) }
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "!!!.e30.", "e30.e30.e30"])
    func malformedTokensAreRefused(jws: String) async {
        await #expect(throws: AppStoreVerificationError.malformed) { try await signer.verifier().verifyTransaction(jws) }
    }

    @Test func payloadMissingARequiredFieldIsMalformed() async throws {
        let jws = try signer.sign(json: ["transactionId": "1", "bundleId": "com.example.train", "environment": "Sandbox"])
        await #expect(throws: AppStoreVerificationError.malformed) { try await signer.verifier().verifyTransaction(jws) }
    }

    // MARK: Xcode and LocalTesting

    @Test(arguments: [AppStoreEnvironment.xcode, .localTesting])
    func unsignedTestingDataNeedsAllowXcode(environment: AppStoreEnvironment) async throws {
        // StoreKit testing data is not signed by the App Store: no usable chain, and the check must not need one.
        let jws = try signer.sign(AppStoreTestSigner.transaction(environment: environment), chain: .omitted)
        await #expect(throws: AppStoreVerificationError.xcodeEnvironmentNotAllowed) { try await signer.verifier().verifyTransaction(jws) }
        let allowing = signer.verifier(allowXcode: true)
        #expect(try await allowing.verifyTransaction(jws).environment == environment)
        let otherApp = try signer.sign(AppStoreTestSigner.transaction(bundleId: "com.other.app", environment: environment), chain: .omitted)
        await #expect(throws: AppStoreVerificationError.wrongBundleID) { try await allowing.verifyTransaction(otherApp) }
    }

    // MARK: Root certificates

    @Test func bundledAppleRootLoadsAndDoesNotTrustTestChains() async throws {
        let apple = try AppStoreSignedDataVerifier.appleRootCAG3()
        #expect(String(describing: apple.subject).contains("Apple Root CA - G3"))
        let verifier = AppStoreSignedDataVerifier(
            rootCertificates: [apple], bundleID: AppStoreTestSigner.bundleID, environment: .sandbox, appAppleID: nil, allowXcode: false
        )
        let jws = try signer.sign(AppStoreTestSigner.transaction())
        await #expect(throws: AppStoreVerificationError.invalidCertificateChain) { try await verifier.verifyTransaction(jws) }
    }

    @Test func rootCertificatesLoadFromDERAndPEMFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("appstore-roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let der = directory.appendingPathComponent("root.cer").path
        let pem = directory.appendingPathComponent("roots.pem").path
        let garbage = directory.appendingPathComponent("garbage.cer").path
        let other = try AppStoreTestSigner()
        try Data(AppStoreTestSigner.derBytes(signer.rootCertificate)).write(to: URL(fileURLWithPath: der))
        let pemText = try signer.rootCertificate.serializeAsPEM().pemString + "\n" + other.rootCertificate.serializeAsPEM().pemString
        try Data(pemText.utf8).write(to: URL(fileURLWithPath: pem))
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: garbage))

        let loaded = try AppStoreSignedDataVerifier.loadRootCertificates(paths: [der, pem])
        #expect(loaded == [signer.rootCertificate, signer.rootCertificate, other.rootCertificate])
        #expect(throws: AppStoreRootCertificateError.notACertificate(path: garbage)) {
            try AppStoreSignedDataVerifier.loadRootCertificates(paths: [der, garbage])
        }
        let missing = directory.appendingPathComponent("missing.cer").path
        #expect(throws: AppStoreRootCertificateError.unreadable(path: missing)) {
            try AppStoreSignedDataVerifier.loadRootCertificates(paths: [missing])
        }
        #expect(AppStoreRootCertificateError.notACertificate(path: garbage).description.contains(garbage))
    }

    @Test func errorCodesAreStable() {
        #expect(AppStoreVerificationError.invalidSignature.code.rawValue == "appstore_invalid_signature")
        #expect(AppStoreVerificationError.xcodeEnvironmentNotAllowed.code.rawValue == "appstore_xcode_environment_not_allowed")
    }
}

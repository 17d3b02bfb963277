import FitBaseCore
import Crypto
import Foundation
import Testing

@testable import FitBaseServer

extension StripeSignatureVerifier {
    /// A `Stripe-Signature` header as Stripe sends it: `t=<timestamp>,v1=<hex HMAC-SHA256 of "t.payload">`.
    static func signatureHeader(payload: some Sequence<UInt8>, secret: String, timestamp: Int64) -> String {
        "t=\(timestamp),v1=\(signature(payload: payload, secret: secret, timestamp: timestamp))"
    }

    /// The lower-case hex `v1` value alone.
    static func signature(payload: some Sequence<UInt8>, secret: String, timestamp: Int64) -> String {
        let signed = Array("\(timestamp).".utf8) + Array(payload)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))
        return mac.map { String(format: "%02x", $0) }.joined()
    }
}

@Suite struct StripeSignatureTests {
    let secret = "whsec_test_5f2b8c1e9d"
    let body = Array(#"{"id":"evt_1","type":"customer.subscription.updated","data":{"object":{}}}"#.utf8)
    let now = Date(timeIntervalSince1970: 1_750_000_000)
    var timestamp: Int64 { Int64(now.timeIntervalSince1970) }

    private func verify(_ header: String?, secrets: [String]? = nil, body: [UInt8]? = nil) throws(StripeSignatureError) {
        try StripeSignatureVerifier(secrets: secrets ?? [secret]).verify(payload: body ?? self.body, header: header, now: now)
    }

    private func header(secret: String? = nil, timestamp: Int64? = nil) -> String {
        StripeSignatureVerifier.signatureHeader(payload: body, secret: secret ?? self.secret, timestamp: timestamp ?? self.timestamp)
    }

    @Test func validSignaturePasses() throws {
        try verify(header())
        // Body as Data, and a header with v0 and an unknown key as well.
        let v1 = StripeSignatureVerifier.signature(payload: body, secret: secret, timestamp: timestamp)
        try StripeSignatureVerifier(secrets: [secret])
            .verify(payload: Data(body), header: "t=\(timestamp),v1=\(v1),v0=0123abcd,future=1", now: now)
    }

    @Test func knownVectorPasses() throws {
        // HMAC-SHA256 of "1750000000.{}" keyed with "whsec_test", computed independently (openssl dgst -sha256 -hmac).
        let header = "t=1750000000,v1=1624ed6eb073685be5cae1bcf200d57c2051b23aad907b6a2d9e045e2b2951da"
        let expected = StripeSignatureVerifier.signature(payload: Array("{}".utf8), secret: "whsec_test", timestamp: 1_750_000_000)
        #expect(header.hasSuffix(expected))
        try StripeSignatureVerifier(secrets: ["whsec_test"]).verify(payload: Array("{}".utf8), header: header, now: now)
    }

    @Test func wrongSecretIsRefused() {
        #expect(throws: StripeSignatureError.noMatchingSignature) { try verify(header(secret: "whsec_someone_else")) }
    }

    @Test func secondOfTwoSecretsPasses() throws {
        try verify(header(secret: "whsec_new"), secrets: ["whsec_old", "whsec_new"])
        #expect(throws: StripeSignatureError.noMatchingSignature) { try verify(header(secret: "whsec_new"), secrets: ["whsec_old"]) }
    }

    @Test func oneMatchingAmongSeveralV1Passes() throws {
        let wrong = StripeSignatureVerifier.signature(payload: body, secret: "whsec_retired", timestamp: timestamp)
        let right = StripeSignatureVerifier.signature(payload: body, secret: secret, timestamp: timestamp)
        try verify("t=\(timestamp),v1=\(wrong),v1=\(right)")
        try verify("t=\(timestamp),v1=\(right),v1=\(wrong)")
        #expect(throws: StripeSignatureError.noMatchingSignature) { try verify("t=\(timestamp),v1=\(wrong),v1=\(wrong)") }
    }

    @Test func staleAndFutureTimestampsAreRefused() {
        #expect(throws: StripeSignatureError.timestampOutsideTolerance) { try verify(header(timestamp: timestamp - 301)) }
        #expect(throws: StripeSignatureError.timestampOutsideTolerance) { try verify(header(timestamp: timestamp + 301)) }
    }

    @Test func timestampExactlyAtToleranceIsAccepted() throws {
        try verify(header(timestamp: timestamp - 300))
        try verify(header(timestamp: timestamp + 300))
    }

    @Test func signatureIsCheckedBeforeTimestamp() {
        #expect(throws: StripeSignatureError.noMatchingSignature) { try verify(header(secret: "whsec_x", timestamp: timestamp - 3_600)) }
    }

    @Test(arguments: [
        "", "garbage", ",", "v1=abcd", "t=,v1=abcd", "t=abc,v1=abcd", "t=12.5,v1=abcd", "t=-5,v1=abcd", "t=1750000000",
        "t=1750000000,v0=abcd", "t=1750000000,t=1750000000,v1=abcd", "t=1750000000,v1",
    ])
    func malformedHeadersAreRefused(header: String) {
        #expect(throws: StripeSignatureError.malformedHeader) { try verify(header) }
    }

    @Test func v1ThatIsNotHexMatchesNothing() {
        #expect(throws: StripeSignatureError.noMatchingSignature) { try verify("t=\(timestamp),v1=not-hex") }
        let upper = StripeSignatureVerifier.signature(payload: body, secret: secret, timestamp: timestamp).uppercased()
        #expect(throws: StripeSignatureError.noMatchingSignature) { try verify("t=\(timestamp),v1=\(upper)") }
    }

    @Test func tamperedBodyIsRefused() {
        var tampered = body
        tampered[tampered.count - 3] = UInt8(ascii: "x")
        #expect(throws: StripeSignatureError.noMatchingSignature) { try verify(header(), body: tampered) }
        #expect(throws: StripeSignatureError.noMatchingSignature) { try verify(header(), body: body + Array(" ".utf8)) }
    }

    @Test func missingHeaderIsRefused() {
        #expect(throws: StripeSignatureError.missingHeader) { try verify(nil) }
        #expect(StripeSignatureError.missingHeader.code.rawValue == "stripe_missing_header")
    }
}

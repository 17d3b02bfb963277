import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A throw-away certificate authority (P-256), made when a ``FakeAPNsServer`` starts, and the server certificate it
/// signs for `localhost` and `127.0.0.1`. Clients trust the fake by trusting ``authorityPEM``, and only then.
struct FakeAPNsCertificates: Sendable {
    /// The authority's certificate in PEM, as a `FITBASE_APNS_TEST_CA_FILE` holds it.
    let authorityPEM: String
    /// TLS for the server: the leaf certificate and key, ALPN `h2` only (APNs speaks nothing else).
    let serverContext: NIOSSLContext

    init() throws {
        let authorityKey = P256.Signing.PrivateKey()
        let authorityName = try DistinguishedName { CommonName("FitBase Fake APNs CA"); OrganizationName("FitBase Tests") }
        let authority = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(authorityKey.publicKey),
            notValidBefore: Date().addingTimeInterval(-86_400), notValidAfter: Date().addingTimeInterval(7 * 86_400),
            issuer: authorityName, subject: authorityName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(authorityKey)
        )
        authorityPEM = try authority.serializeAsPEM().pemString

        let leafKey = P256.Signing.PrivateKey()
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(leafKey.publicKey),
            notValidBefore: Date().addingTimeInterval(-3_600), notValidAfter: Date().addingTimeInterval(7 * 86_400),
            issuer: authorityName, subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: Certificate.PrivateKey(authorityKey)
        )
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(leaf.serializeAsPEM().pemString.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafKey.pemRepresentation.utf8), format: .pem))
        )
        configuration.applicationProtocols = ["h2"]
        configuration.minimumTLSVersion = .tlsv12
        serverContext = try NIOSSLContext(configuration: configuration)
    }
}

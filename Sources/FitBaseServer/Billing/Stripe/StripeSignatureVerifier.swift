import FitBaseCore
import Crypto
import Foundation

/// Why a Stripe webhook's `Stripe-Signature` header was refused.
enum StripeSignatureError: Error, Equatable, CustomStringConvertible {
    case missingHeader
    /// No `t`, a `t` that is not whole seconds, an item that is not `key=value`, or no `v1` at all.
    case malformedHeader
    /// No `v1` signature matches any configured endpoint secret.
    case noMatchingSignature
    /// Signed too long ago (or too far ahead) for the tolerance: a replay, or a badly skewed clock.
    case timestampOutsideTolerance

    /// Stable snake_case code for problem+json, e.g. `stripe_no_matching_signature`.
    var code: ProblemCode {
        switch self {
        case .missingHeader: .stripeMissingHeader
        case .malformedHeader: .stripeMalformedHeader
        case .noMatchingSignature: .stripeNoMatchingSignature
        case .timestampOutsideTolerance: .stripeTimestampOutsideTolerance
        }
    }

    var description: String {
        switch self {
        case .missingHeader: "The Stripe-Signature header is missing."
        case .malformedHeader: "The Stripe-Signature header is not t=…,v1=…."
        case .noMatchingSignature: "No Stripe-Signature v1 signature matches the webhook secret."
        case .timestampOutsideTolerance: "The Stripe-Signature timestamp is outside the tolerance."
        }
    }
}

/// Checks Stripe webhook signatures: `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`,
/// keyed with an endpoint secret (`whsec_…`, used as is); several secrets while one is being rolled.
struct StripeSignatureVerifier: Sendable {
    private let keys: [SymmetricKey]
    private let tolerance: TimeInterval

    /// - Parameters:
    ///   - secrets: the endpoint secrets; a signature made with any of them is accepted.
    ///   - tolerance: the most seconds between the signed timestamp and now, either way.
    init(secrets: [String], tolerance: TimeInterval = 300) {
        self.keys = secrets.map { SymmetricKey(data: Data($0.utf8)) }
        self.tolerance = tolerance
    }

    /// Verifies `header` against the exact raw body bytes, before any parsing (any byte collection: `[UInt8]`,
    /// `Data`, a `ByteBuffer`'s `readableBytesView`): first a `v1` matching a secret, then the timestamp.
    func verify(payload: some Sequence<UInt8>, header: String?, now: Date) throws(StripeSignatureError) {
        guard let header else { throw .missingHeader }
        guard let (timestamp, signatures) = StripeSignatureHeader.parse(header) else { throw .malformedHeader }
        var signedBytes = Array("\(timestamp).".utf8)
        signedBytes.append(contentsOf: payload)
        let matches = keys.contains { key in
            let expected = HMAC<SHA256>.authenticationCode(for: signedBytes, using: key)
            // `==` between a MAC and bytes compares in constant time.
            return signatures.contains { expected == $0 }
        }
        guard matches else { throw .noMatchingSignature }
        guard abs(now.timeIntervalSince1970 - TimeInterval(timestamp)) <= tolerance else { throw .timestampOutsideTolerance }
    }
}

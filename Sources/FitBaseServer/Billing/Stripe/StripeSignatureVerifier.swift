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
        let (timestamp, signatures) = try Self.parse(header)
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

    /// The timestamp and the decoded `v1` signatures; `v0` and unknown keys are ignored. A `v1` that is not
    /// lower-case hex counts as present but can match nothing.
    private static func parse(_ header: String) throws(StripeSignatureError) -> (timestamp: Int64, signatures: [[UInt8]]) {
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        var hasV1 = false
        for item in header.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { throw .malformedHeader }
            let key = pair[0].trimmingCharacters(in: .whitespaces)
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            switch key {
            case "t":
                guard timestamp == nil, !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                    let seconds = Int64(value)
                else { throw .malformedHeader }
                timestamp = seconds
            case "v1":
                hasV1 = true
                if let bytes = lowercaseHexBytes(value) { signatures.append(bytes) }
            default:
                continue
            }
        }
        guard let timestamp, hasV1 else { throw .malformedHeader }
        return (timestamp, signatures)
    }

    private static func lowercaseHexBytes(_ text: String) -> [UInt8]? {
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case 0x30...0x39: digit - 0x30
            case 0x61...0x66: digit - 0x61 + 10
            default: nil
            }
        }
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

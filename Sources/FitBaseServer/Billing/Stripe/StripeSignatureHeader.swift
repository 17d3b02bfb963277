import Foundation

/// A `Stripe-Signature` header read into its timestamp and `v1` signatures, before any is checked
/// (``StripeSignatureVerifier``): `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, other keys (`v0`) ignored.
///
/// Pure parsing over Foundation, so `Fuzz/StripeSignature` compiles it alone.
enum StripeSignatureHeader {
    /// The timestamp and the decoded `v1` signatures; nil when an item is not `key=value`, `t` is missing, repeated
    /// or not 1–18 decimal digits, or there is no `v1`. A `v1` that is not lower-case hex counts as present but can
    /// match nothing.
    static func parse(_ header: String) -> (timestamp: Int64, signatures: [[UInt8]])? {
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        var hasV1 = false
        for item in header.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { return nil }
            let key = pair[0].trimmingCharacters(in: .whitespaces)
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            switch key {
            case "t":
                // At most 18 digits: never past `Int64.max`, and far past any instant Stripe signs at.
                guard timestamp == nil, (1...18).contains(value.utf8.count),
                    value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seconds = Int64(value)
                else { return nil }
                timestamp = seconds
            case "v1":
                hasV1 = true
                if let bytes = lowercaseHexBytes(value) { signatures.append(bytes) }
            default:
                continue
            }
        }
        guard let timestamp, hasV1 else { return nil }
        return (timestamp, signatures)
    }

    /// The bytes `text` spells in lower-case hex, two digits a byte; nil for anything else.
    static func lowercaseHexBytes(_ text: String) -> [UInt8]? {
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

import Foundation

extension Data {
    /// Base64url without padding (RFC 4648 §5), as JOSE and our cursors use it.
    ///
    /// Translated byte by byte from Foundation's base64 in one pass (three `replacingOccurrences` passes through
    /// NSString cost 3 % of a workout log request, which writes a cursor into its sync event).
    var base64URLEncoded: String {
        var bytes = Array(base64EncodedData())
        var count = bytes.count
        while count > 0, bytes[count - 1] == UInt8(ascii: "=") { count -= 1 }
        for index in 0..<count {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// Decodes base64url, padded or not; `nil` when the text is not base64url.
    init?(base64URLEncoded text: String) {
        self.init(base64URLEncoded: text.utf8[...])
    }

    /// ``init(base64URLEncoded:)-(String)`` from the text's bytes (a part of a token, not copied into a string first).
    init?(base64URLEncoded text: Substring.UTF8View) {
        guard let bytes = Base64URL.decode(text) else { return nil }
        self.init(bytes)
    }
}

/// Base64url decoding straight from a text's bytes (RFC 4648 §5, padded or not), into bytes.
enum Base64URL {
    /// The six-bit value of each byte of the alphabet; 0xFF for every other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        return table
    }()

    /// The bytes `text` encodes; `nil` when it has a byte outside the alphabet, padding anywhere but at its end, a
    /// length no encoding has (one character over a multiple of four), or bits set past the last byte.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var count = text.count
        var end = text.endIndex
        // Up to two "=" at the end, and only to make the length a multiple of four.
        if count % 4 == 0 {
            for _ in 0..<2 {
                guard count > 0 else { break }
                let last = text.index(end, offsetBy: -1)
                guard text[last] == UInt8(ascii: "=") else { break }
                end = last
                count -= 1
            }
        }
        guard count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var index = text.startIndex
        while index != end {
            let value = values[Int(text[index])]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
            text.formIndex(after: &index)
        }
        // The bits left over must be zero: one spelling per value, so a token with a changed last character is a
        // changed token. (Foundation's decoder, used here before, let such bits pass.)
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}

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
        var base64 = Array(text)
        for index in base64.indices {
            switch base64[index] {
            case UInt8(ascii: "-"): base64[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): base64[index] = UInt8(ascii: "/")
            default: break
            }
        }
        base64 += Array(repeating: UInt8(ascii: "="), count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: Data(base64))
    }
}

import Foundation

/// The opaque cursors lists hand out (`base64url` of a position) and what reading one back yields.
///
/// Pure parsing over Foundation (with ``Base64URL``), so `Fuzz/PageCursor` compiles it alone. A cursor is the
/// client's to change: a position read from one is at most ``maximumPosition``, so a list may add a page's length to
/// it without an overflow (a trap, which would stop the server).
enum PageCursor {
    /// The largest offset or sequence number a cursor may carry: 2^40, past any list FitBase pages through.
    static let maximumPosition = 1 << 40

    /// Wraps a list's position so clients treat it as opaque.
    static func encode(_ position: String) -> String {
        Data(position.utf8).base64URLEncoded
    }

    /// The position `cursor` wraps; nil when it is not base64url.
    static func decode(_ cursor: String) -> String? {
        Base64URL.decode(cursor.utf8).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The number after `prefix` in the position `cursor` wraps (`offset:40`, `seq:1234`): decimal digits only, at
    /// most ``maximumPosition``; nil for anything else.
    static func number(in cursor: String, after prefix: String) -> Int? {
        guard let text = decode(cursor), text.hasPrefix(prefix) else { return nil }
        let digits = text.utf8.dropFirst(prefix.utf8.count)
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard !digits.isEmpty, digits.count <= 16, digits.allSatisfy(isDigit), let number = Int(Substring(digits)),
            number <= maximumPosition
        else { return nil }
        return number
    }
}

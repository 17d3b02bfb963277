/// A media link's token read into its parts, before any signature is checked: `base64url(key) "." expiry "."
/// base64url(HMAC)` (``MediaLinks``).
///
/// Pure parsing over the standard library (with ``Base64URL`` and ``ASCIIText``), so `Fuzz/MediaLink` compiles it
/// alone. Read from the token's bytes: every ranged read of a video passes here.
struct MediaLinkToken {
    /// The bytes the signature covers: the key's path, "\n", then the expiry's digits as the token spells them.
    let signed: [UInt8]
    /// How many of ``signed``'s first bytes are the key's path.
    let keyLength: Int
    /// When the link ends, in Unix seconds (at most 18 digits, so it is never past `Int64.max`).
    let expirySeconds: Int64
    /// The signature the token carries.
    let signature: [UInt8]

    /// The parts of `token`, nil when it is not three dot-separated parts: base64url, 1–18 decimal digits, base64url.
    init?(_ token: Substring) {
        let bytes = token.utf8
        guard let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
            let secondDot = bytes[bytes.index(after: firstDot)...].firstIndex(of: UInt8(ascii: ".")),
            !bytes[bytes.index(after: secondDot)...].contains(UInt8(ascii: "."))
        else { return nil }
        let digits = bytes[bytes.index(after: firstDot)..<secondDot]
        guard var signed = Base64URL.decode(bytes[..<firstDot]), let seconds = ASCIIText.decimal(digits),
            let signature = Base64URL.decode(bytes[bytes.index(after: secondDot)...])
        else { return nil }
        keyLength = signed.count
        signed.append(UInt8(ascii: "\n"))
        signed.append(contentsOf: digits)
        self.signed = signed
        self.expirySeconds = seconds
        self.signature = signature
    }

    /// The key's path as the token carries it (not yet checked to be a ``MediaKey``).
    var keyBytes: ArraySlice<UInt8> { signed[..<keyLength] }
}

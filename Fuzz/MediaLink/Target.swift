import Foundation

/// Feeds a media link's token to ``MediaLinkToken/init(_:)``: a token read into parts writes back as the same token
/// (its padding aside), and a key it names is a ``MediaKey`` whose path reads back as the same key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let token = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let parts = MediaLinkToken(token[...]) else { return 0 }
    guard parts.expirySeconds >= 0, parts.signed[parts.keyLength] == UInt8(ascii: "\n") else { fatalError("\(token)") }
    let digits = String(decoding: parts.signed[(parts.keyLength + 1)...], as: UTF8.self)
    let written = Data(parts.keyBytes).base64URLEncoded + "." + digits + "." + Data(parts.signature).base64URLEncoded
    guard written == token.filter({ $0 != "=" }) else { fatalError("\(token) writes back as \(written)") }
    if let key = MediaKey(bytes: Array(parts.keyBytes)) {
        guard MediaKey(key.path) == key, !key.contentType.isEmpty else { fatalError("\(key) does not read back") }
    }
    return 0
}

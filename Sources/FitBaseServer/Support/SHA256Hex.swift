import Crypto
import Foundation

/// The SHA-256 of `text`'s UTF-8 bytes as 64 lower-case hex digits: how refresh tokens and throttled addresses are
/// stored, and how Apple's nonce is compared.
func sha256Hex(_ text: String) -> String {
    hexString(SHA256.hash(data: Data(text.utf8)))
}

/// `bytes` as lower-case hex digits, two per byte. (`String(format: "%02x")` per byte cost 8 % of the CPU of a
/// workout log write, whose audit entry hashes twice.)
func hexString<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}

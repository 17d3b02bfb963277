/// `bytes` as lower-case hex digits, two per byte: how the server writes digests and keys, and how the SDK sends an
/// APNs device token. (`String(format: "%02x")` per byte cost 8 % of the CPU of a workout log write, whose audit entry
/// hashes twice.)
package func hexString<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}

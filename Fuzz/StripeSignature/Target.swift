/// Feeds a `Stripe-Signature` header to ``StripeSignatureHeader/parse(_:)``: a header read writes back (timestamp
/// and signatures in hex) as one that reads back equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let (timestamp, signatures) = StripeSignatureHeader.parse(header) else { return 0 }
    guard timestamp >= 0 else { fatalError("\(header) gave \(timestamp)") }
    // A `v1` that is not hex is kept as present, with no signature.
    let written = "t=\(timestamp)" + signatures.map { ",v1=" + hex($0) }.joined() + (signatures.isEmpty ? ",v1=x" : "")
    guard let again = StripeSignatureHeader.parse(written), again.timestamp == timestamp, again.signatures == signatures
    else { fatalError("\(header) writes back as \(written), which reads otherwise") }
    return 0
}

/// `bytes` in lower-case hex, two digits a byte.
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
}

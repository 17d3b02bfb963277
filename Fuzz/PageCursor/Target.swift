import Foundation

/// Feeds a cursor to ``PageCursor``: a position read back is within bounds, a page's length added to it cannot
/// overflow, and the cursor written for it reads back the same; bytes that decode write back as the same cursor.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: data, count: size)
    let cursor = String(decoding: buffer, as: UTF8.self)
    if let decoded = Base64URL.decode(cursor.utf8) {
        guard Data(decoded).base64URLEncoded == cursor.filter({ $0 != "=" }) else {
            fatalError("\(cursor) writes back otherwise")
        }
    }
    guard Base64URL.decode(Data(buffer).base64URLEncoded.utf8) == Array(buffer) else {
        fatalError("bytes do not read back")
    }
    for prefix in ["offset:", "seq:"] {
        guard let number = PageCursor.number(in: cursor, after: prefix) else { continue }
        guard (0...PageCursor.maximumPosition).contains(number), !number.addingReportingOverflow(100).overflow else {
            fatalError("\(cursor) names \(number)")
        }
        guard PageCursor.number(in: PageCursor.encode(prefix + String(number)), after: prefix) == number else {
            fatalError("\(number) does not read back")
        }
    }
    return 0
}

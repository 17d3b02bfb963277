/// Feeds a `Range` header value to ``MediaByteRange/init(header:)``: a range parsed writes back as a header that
/// parses equal, and resolves, for objects of every size around its numbers, to a non-empty part of the object.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let range = MediaByteRange(header: header) else { return 0 }
    guard MediaByteRange(header: range.headerValue) == range else { fatalError("\(range) reads back otherwise") }
    var sizes: [Int64] = [0, 1, 2, 1 << 20, Int64.max - 1, Int64.max]
    switch range {
    case .from(let start, let end):
        sizes += [start, start.addingReportingOverflow(1).partialValue]
        if let end { sizes += [end, end.addingReportingOverflow(1).partialValue] }
    case .suffix(let count):
        sizes += [count - 1, count, count.addingReportingOverflow(1).partialValue]
    }
    for objectSize in sizes where objectSize >= 0 {
        guard let bytes = range.resolved(size: objectSize) else { continue }
        guard bytes.lowerBound >= 0, bytes.upperBound < objectSize else {
            fatalError("\(range) of \(objectSize) bytes gave \(bytes)")
        }
    }
    return 0
}

/// Feeds an S3 answer to ``S3XML/values(of:in:)`` and ``S3XML/listPage(_:)`` for every element FitBase reads,
/// and the same bytes as text through ``S3XML/escape(_:)``: any text escaped into an element (one holding others
/// included) reads back unchanged, and no value is longer than the answer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for tag in ["UploadId", "Code", "IsTruncated", "NextContinuationToken"] {
        for value in S3XML.values(of: tag, in: text) where value.utf8.count > text.utf8.count {
            fatalError("<\(tag)> holds more than the answer: \(value)")
        }
    }
    for object in S3XML.listPage(text).objects where object.size < 0 || object.key.utf8.count > text.utf8.count {
        fatalError("a listed object reads past the answer: \(object)")
    }
    let wrapped = "<Contents><Key>" + S3XML.escape(text) + "</Key><Size>1</Size></Contents>"
    guard S3XML.elements(of: "Contents", in: wrapped).flatMap({ S3XML.values(of: "Key", in: $0) }) == [text] else {
        fatalError("\(text) does not read back from \(wrapped)")
    }
    return 0
}

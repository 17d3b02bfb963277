import Foundation

/// Feeds bytes to ``JSONValue/parse(_:)`` (and to ``RecordJSON/init(json:)``, which falls back to Foundation's
/// decoder): any bytes give a value or nil, and a value written out reads back equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let value = JSONValue.parse(bytes) {
        var written: [UInt8] = []
        value.write(into: &written)
        let again = written.withUnsafeBytes { JSONValue.parse($0) }
        guard again == value else { fatalError("\(value) was written as \(String(decoding: written, as: UTF8.self))") }
    }
    _ = try? RecordJSON(json: Data(bytes))
    return 0
}

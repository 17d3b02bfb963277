/// libFuzzer target: the PNG cleaner (and the inspector's limit over it) on any bytes. It must answer an image or an
/// `ImageProblem`, never trap; an image it answers must clean again to itself with the same size, and pass the
/// inspector's limit only when every size it declares is within it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let inspector = ImageInspector(maxPixels: 8192)
    guard let image = try? PNGCleaner.clean(bytes) else { return 0 }
    guard let again = try? PNGCleaner.clean(image.bytes) else { fatalError("a cleaned PNG does not clean again") }
    precondition(again.size == image.size, "cleaning a cleaned PNG changed its size")
    if let inspected = try? inspector.inspect(bytes) {
        for declared in [inspected.size] + inspected.declaredSizes {
            precondition(declared.width <= 8192 && declared.height <= 8192, "a size past the limit was accepted")
        }
    }
    return 0
}

/// libFuzzer target: the PNG cleaner, with the checks of `checkImageCleaner` (Fuzz/ImageTargetChecks.swift).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkImageCleaner(Array(UnsafeBufferPointer(start: data, count: size)), format: "PNG", clean: PNGCleaner.clean)
    return 0
}

/// The checks every image fuzz target makes (compiled into each through its `sources`): a cleaner answers an image or
/// an `ImageProblem`, never traps; an image it answers cleans again to itself with the same size; the inspector's
/// limit passes an image only when every size it declares is within it.
func checkImageCleaner(_ bytes: [UInt8], format: String, clean: ([UInt8]) throws(ImageProblem) -> InspectedImage) {
    guard let image = try? clean(bytes) else { return }
    guard let again = try? clean(image.bytes) else { fatalError("a cleaned \(format) does not clean again") }
    precondition(again.size == image.size, "cleaning a cleaned \(format) changed its size")
    if let inspected = try? ImageInspector(maxPixels: 8192).inspect(bytes) {
        for declared in [inspected.size] + inspected.declaredSizes {
            precondition(declared.width <= 8192 && declared.height <= 8192, "a size past the limit was accepted")
        }
    }
}

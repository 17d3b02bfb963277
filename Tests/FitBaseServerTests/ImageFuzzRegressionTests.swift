import Testing

@testable import FitBaseServer

/// The image targets' kept inputs (`Fuzz/HEIC`, `Fuzz/JPEG`, `Fuzz/PNG`) replayed with the targets' own checks: each
/// cleans to an image that cleans again to its size with every declared size within the limit, or is refused.
extension FuzzRegressionTests {
    static func replayImages(_ target: String, _ clean: ([UInt8]) throws(ImageProblem) -> InspectedImage) throws {
        let inspector = ImageInspector(maxPixels: 8192)
        try replay(target) { name, bytes in
            guard let image = try? clean(bytes) else { return }
            let again = try #require(try? clean(image.bytes), "\(name): a cleaned image does not clean again")
            #expect(again.size == image.size, "\(name)")
            if let inspected = try? inspector.inspect(bytes) {
                for size in [inspected.size] + inspected.declaredSizes {
                    #expect(size.width <= 8192 && size.height <= 8192, "\(name): \(size) accepted")
                }
            }
        }
    }

    @Test func heicFiles() throws { try Self.replayImages("HEIC", HEICCleaner.clean) }

    @Test func jpegFiles() throws { try Self.replayImages("JPEG", JPEGCleaner.clean) }

    @Test func pngFiles() throws { try Self.replayImages("PNG", PNGCleaner.clean) }
}

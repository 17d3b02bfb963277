import Foundation
import Testing

@testable import FitBaseServer

/// Recognising, checking and cleaning profile photos, without a server.
@Suite struct ImageInspectionTests {
    let inspector = ImageInspector(maxPixels: 8192)

    @Test func aJPEGLosesItsMetadataButKeepsItsOrientation() throws {
        let original = TestImages.jpeg(width: 640, height: 480, orientation: 6)
        #expect(TestImages.contains(original, TestImages.secret))
        let image = try inspector.inspect(original)
        #expect(image.format == .jpeg)
        #expect((image.width, image.height) == (640, 480))
        #expect(!TestImages.contains(image.bytes, TestImages.secret))
        #expect(!TestImages.contains(image.bytes, "xmpmeta"))
        #expect(image.bytes.starts(with: [0xFF, 0xD8, 0xFF, 0xE0]))
        #expect(image.bytes.suffix(2) == [0xFF, 0xD9])
        #expect(TestImages.contains(image.bytes, bytes: [0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD0, 0x78, 0x9A, 0xFF, 0xD9]))
        // The orientation comes back in an EXIF of its own, right after JFIF.
        let exif = try #require(Self.segments(image.bytes).first { $0.marker == 0xE1 })
        #expect(JPEGCleaner.exifOrientation(exif.payload) == 6)
        #expect(Self.segments(image.bytes).map(\.marker) == [0xE0, 0xE1, 0xDB, 0xC0, 0xC4, 0xDA])
        // Cleaning a cleaned image changes nothing.
        #expect(try inspector.inspect(image.bytes).bytes == image.bytes)
    }

    @Test func anUprightJPEGGetsNoEXIF() throws {
        let image = try inspector.inspect(TestImages.jpeg(orientation: 1))
        #expect(!Self.segments(image.bytes).contains { $0.marker == 0xE1 })
    }

    @Test func aPNGLosesItsTextTimeAndEXIF() throws {
        let image = try inspector.inspect(TestImages.png(width: 320, height: 200))
        #expect(image.format == .png)
        #expect((image.width, image.height) == (320, 200))
        #expect(!TestImages.contains(image.bytes, TestImages.secret))
        for kept in ["IHDR", "sRGB", "IDAT", "IEND"] { #expect(TestImages.contains(image.bytes, kept)) }
        for dropped in ["tEXt", "eXIf", "tIME", "iTXt"] { #expect(!TestImages.contains(image.bytes, dropped)) }
    }

    @Test func aHEICLosesItsEXIFInPlace() throws {
        let original = TestImages.heic(width: 1024, height: 768)
        let image = try inspector.inspect(original)
        #expect(image.format == .heic)
        #expect((image.width, image.height) == (1024, 768))
        #expect(!TestImages.contains(image.bytes, TestImages.secret))
        #expect(image.bytes.count == original.count)
        #expect(TestImages.contains(image.bytes, bytes: [UInt8](repeating: 0xAB, count: 16)))
    }

    @Test func whatIsNotAnImageIsRefused() {
        for bytes in [Array("just some text".utf8), Array("GIF89a....".utf8), [], [0xFF, 0xD8]] {
            #expect(throws: ImageProblem.unsupported) { try inspector.inspect(bytes) }
        }
    }

    @Test func cutOffOrDamagedImagesAreRefused() {
        for original in [TestImages.jpeg(), TestImages.png(), TestImages.heic()] {
            for length in [original.count / 3, original.count / 2, original.count - 1] {
                #expect(throws: ImageProblem.self) { try inspector.inspect(Array(original.prefix(length))) }
            }
        }
        var damaged = TestImages.png()
        damaged[40] ^= 0xFF
        #expect { try inspector.inspect(damaged) } throws: { error in
            if case ImageProblem.truncated = error { true } else { false }
        }
    }

    @Test func hugeDimensionsInASmallFileAreRefused() throws {
        let bomb = TestImages.png(width: 100_000, height: 100_000)
        #expect(bomb.count < 500)
        #expect(throws: ImageProblem.tooLarge(width: 100_000, height: 100_000, limit: 8192)) { try inspector.inspect(bomb) }
        #expect(throws: ImageProblem.tooLarge(width: 60_000, height: 10, limit: 8192)) { try inspector.inspect(TestImages.jpeg(width: 60_000, height: 10)) }
        #expect(throws: ImageProblem.tooLarge(width: 9000, height: 9000, limit: 8192)) { try inspector.inspect(TestImages.heic(width: 9000, height: 9000)) }
    }

    @Test func crc32() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    /// The markers and payloads of a JPEG's segments up to its scan.
    static func segments(_ bytes: [UInt8]) -> [(marker: UInt8, payload: [UInt8])] {
        var found: [(UInt8, [UInt8])] = []
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            found.append((marker, Array(bytes[(offset + 4)..<(offset + 2 + length)])))
            if marker == 0xDA { break }
            offset += 2 + length
        }
        return found
    }
}

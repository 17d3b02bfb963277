/// The image formats a profile photo may be, recognised from their bytes (never from the declared type).
enum ImageFormat: String, Sendable, Equatable {
    case jpeg, png, heic

    /// The media type it is served with.
    var contentType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .heic: "image/heic"
        }
    }

    /// The format a stored object's extension names.
    init?(fileExtension key: MediaKey) {
        switch key.path.split(separator: ".").last?.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "heic": self = .heic
        default: return nil
        }
    }

    /// The extension of its stored object.
    var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .heic: "heic"
        }
    }
}

/// A width and height in pixels.
struct PixelSize: Sendable, Equatable {
    let width: Int
    let height: Int

    /// The number of pixels, without overflow for any two 32-bit sides.
    var area: UInt64 { UInt64(max(0, width)) * UInt64(max(0, height)) }
}

/// An image checked and cleaned: what it is, its size in pixels, and its bytes without metadata.
struct InspectedImage: Sendable, Equatable {
    let format: ImageFormat
    let width: Int
    let height: Int
    /// The image without what could identify where, when or on what it was taken: JPEG's EXIF/XMP/IPTC segments and
    /// comments (the EXIF orientation is kept, in an EXIF of its own), PNG's text, time and eXIf chunks, HEIC's Exif
    /// and XMP items (overwritten with zeros, so every offset in the file stays right).
    let bytes: [UInt8]
    /// Every size the file declares for an image a decoder may build: the frame of a JPEG, the header of a PNG, each
    /// `ispe` and each grid canvas of a HEIC. The limit applies to all of them, not only to the one shown.
    var declaredSizes: [PixelSize] = []
    /// Whether a decoder holds the whole image at full size while decoding it (a progressive JPEG's coefficients, a
    /// PNG, a HEIC), rather than decoding it already scaled down (a baseline JPEG).
    var decodedWhole = true

    /// The image's own size.
    var size: PixelSize { PixelSize(width: width, height: height) }
}

/// Why an upload is not an acceptable image.
enum ImageProblem: Error, Equatable {
    /// Not JPEG, PNG or HEIC.
    case unsupported
    /// The file ends before the image does, or its structure is broken.
    case truncated(String)
    /// Wider or taller than allowed (a small file that would decode to a huge image).
    case tooLarge(width: Int, height: Int, limit: Int)
    /// Its decoder reads a size past the limits (more pixels than may be decoded, or not the size the file declares).
    case decodedTooLarge(width: Int, height: Int)
    /// Its decoder refused it, or could not decode it within its time and memory.
    case notDecodable(String)
}

/// Recognises JPEG, PNG and HEIC from their first bytes, walks their structure to the end (a truncated or malformed
/// file is refused), reads their dimensions and strips their metadata.
struct ImageInspector: Sendable {
    /// The largest width or height accepted.
    let maxPixels: Int

    func inspect(_ bytes: [UInt8]) throws(ImageProblem) -> InspectedImage {
        let image: InspectedImage
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            image = try JPEGCleaner.clean(bytes)
        } else if bytes.starts(with: PNGCleaner.signature) {
            image = try PNGCleaner.clean(bytes)
        } else if HEICCleaner.isHEIC(bytes) {
            image = try HEICCleaner.clean(bytes)
        } else {
            throw .unsupported
        }
        guard image.width > 0, image.height > 0 else { throw .truncated("the image has no width or height") }
        for size in [image.size] + image.declaredSizes where size.width > maxPixels || size.height > maxPixels {
            throw .tooLarge(width: size.width, height: size.height, limit: maxPixels)
        }
        return image
    }
}

/// Big-endian reads that refuse to run past the end, and the checked arithmetic on the offsets and sizes a file
/// declares: a number in the file can make a sum overflow or a range run backwards, and either would trap.
struct ByteReader {
    let bytes: [UInt8]

    func uint8(at offset: Int) throws(ImageProblem) -> Int {
        guard offset >= 0, offset < bytes.count else { throw .truncated("the file ends inside a header") }
        return Int(bytes[offset])
    }

    func uint16(at offset: Int) throws(ImageProblem) -> Int {
        try Int(field(at: offset, width: 2))
    }

    func uint32(at offset: Int) throws(ImageProblem) -> Int {
        try Int(field(at: offset, width: 4))
    }

    /// A 64-bit size or offset; one of 2^62 or more is refused (no file FitBase accepts comes near it, and sums of
    /// two such values cannot overflow).
    func uint64(at offset: Int) throws(ImageProblem) -> Int {
        let value = try field(at: offset, width: 8)
        guard value < 1 << 62 else { throw .truncated("a size is out of range") }
        return Int(value)
    }

    /// An unsigned big-endian field of `width` bytes (0, 1, 2, 4 or 8; 0 reads as 0).
    func field(at offset: Int, width: Int) throws(ImageProblem) -> UInt64 {
        guard offset >= 0, width >= 0, width <= 8, width <= bytes.count, offset <= bytes.count - width else {
            throw .truncated("the file ends inside a header")
        }
        var value: UInt64 = 0
        for index in offset..<(offset + width) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    func fourCC(at offset: Int) throws(ImageProblem) -> String {
        guard offset >= 0, bytes.count >= 4, offset <= bytes.count - 4 else { throw .truncated("the file ends inside a header") }
        return String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    }

    /// `values` added up; an overflow is a damaged file, not a trap.
    static func sum(_ values: Int...) throws(ImageProblem) -> Int {
        var total = 0
        for value in values {
            let (result, overflow) = total.addingReportingOverflow(value)
            guard !overflow, value >= 0 else { throw .truncated("an offset or size is out of range") }
            total = result
        }
        return total
    }

    /// `start..<start + length`, refused when it overflows or does not lie within `bounds`.
    static func range(from start: Int, length: Int, within bounds: Range<Int>) throws(ImageProblem) -> Range<Int> {
        let end = try sum(start, length)
        guard start >= bounds.lowerBound, end <= bounds.upperBound else { throw .truncated("a part of the file lies outside it") }
        return start..<end
    }
}

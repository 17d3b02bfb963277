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

/// An image checked and cleaned: what it is, its size in pixels, and its bytes without metadata.
struct InspectedImage: Sendable, Equatable {
    let format: ImageFormat
    let width: Int
    let height: Int
    /// The image without what could identify where, when or on what it was taken: JPEG's EXIF/XMP/IPTC segments and
    /// comments (the EXIF orientation is kept, in an EXIF of its own), PNG's text, time and eXIf chunks, HEIC's Exif
    /// and XMP items (overwritten with zeros, so every offset in the file stays right).
    let bytes: [UInt8]
}

/// Why an upload is not an acceptable image.
enum ImageProblem: Error, Equatable {
    /// Not JPEG, PNG or HEIC.
    case unsupported
    /// The file ends before the image does, or its structure is broken.
    case truncated(String)
    /// Wider or taller than allowed (a small file that would decode to a huge image).
    case tooLarge(width: Int, height: Int, limit: Int)
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
        guard image.width <= maxPixels, image.height <= maxPixels else {
            throw .tooLarge(width: image.width, height: image.height, limit: maxPixels)
        }
        return image
    }
}

/// Big-endian reads that refuse to run past the end.
struct ByteReader {
    let bytes: [UInt8]

    func uint16(at offset: Int) throws(ImageProblem) -> Int {
        guard offset >= 0, offset + 2 <= bytes.count else { throw .truncated("the file ends inside a header") }
        return Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
    }

    func uint32(at offset: Int) throws(ImageProblem) -> Int {
        guard offset >= 0, offset + 4 <= bytes.count else { throw .truncated("the file ends inside a header") }
        return Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    func uint64(at offset: Int) throws(ImageProblem) -> Int {
        let high = try uint32(at: offset), low = try uint32(at: offset + 4)
        guard high < 1 << 30 else { throw .truncated("a size is out of range") }
        return high << 32 | low
    }

    func fourCC(at offset: Int) throws(ImageProblem) -> String {
        guard offset >= 0, offset + 4 <= bytes.count else { throw .truncated("the file ends inside a header") }
        return String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    }
}

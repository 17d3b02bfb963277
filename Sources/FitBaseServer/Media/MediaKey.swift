/// The name of a stored object: `/`-separated segments of letters, digits, `.`, `_` and `-` (no empty, `.` or `..`
/// segment), at most 512 characters, so it is the same safe path on disk and in a bucket.
struct MediaKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The key's text, e.g. `users/0b7f…/photo/full.jpg`.
    let path: String

    /// A key from its text; nil when it is not a safe key.
    init?(_ path: String) {
        guard Self.isValid(path.utf8) else { return nil }
        self.path = path
    }

    /// The key whose path is these bytes (a media link's, decoded), when they make one.
    init?(bytes: [UInt8]) {
        guard Self.isValid(bytes) else { return nil }
        self.path = String(decoding: bytes, as: UTF8.self)
    }

    /// One to 512 bytes of segments split by "/", none empty, "." or "..", each of letters, digits, ".", "_" and "-".
    /// Read in one pass (every media link read checks its key).
    private static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 512 else { return false }
        var length = 0
        var onlyDots = true
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                guard length > 0, !(onlyDots && length <= 2) else { return false }
                length = 0
                onlyDots = true
            } else {
                guard allowed(byte) else { return false }
                length += 1
                onlyDots = onlyDots && byte == UInt8(ascii: ".")
            }
        }
        return length > 0 && !(onlyDots && length <= 2)
    }

    var description: String { path }

    static func < (lhs: MediaKey, rhs: MediaKey) -> Bool { lhs.path < rhs.path }

    /// The media type a key's extension stands for (what the data directory answers with; S3 keeps the type given).
    var contentType: String {
        // From the extension's bytes: every read of a stored file asks.
        let bytes = path.utf8
        let name = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes[bytes.index(after: $0)...] } ?? bytes[...]
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")) else { return "application/octet-stream" }
        let suffix = name[name.index(after: dot)...]
        if ASCIIText.equalsIgnoringCase(suffix, "jpg") || ASCIIText.equalsIgnoringCase(suffix, "jpeg") { return "image/jpeg" }
        if ASCIIText.equalsIgnoringCase(suffix, "png") { return "image/png" }
        if ASCIIText.equalsIgnoringCase(suffix, "heic") { return "image/heic" }
        if ASCIIText.equalsIgnoringCase(suffix, "mp4") { return "video/mp4" }
        if ASCIIText.equalsIgnoringCase(suffix, "mov") { return "video/quicktime" }
        if ASCIIText.equalsIgnoringCase(suffix, "webp") { return "image/webp" }
        return "application/octet-stream"
    }

    private static func allowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}

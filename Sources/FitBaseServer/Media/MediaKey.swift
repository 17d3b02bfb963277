/// The name of a stored object: `/`-separated segments of letters, digits, `.`, `_` and `-` (no empty, `.` or `..`
/// segment), at most 512 characters, so it is the same safe path on disk and in a bucket.
struct MediaKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The key's text, e.g. `users/0b7f…/photo/full.jpg`.
    let path: String

    /// A key from its text; nil when it is not a safe key.
    init?(_ path: String) {
        guard !path.isEmpty, path.utf8.count <= 512 else { return nil }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard !segment.isEmpty, segment != ".", segment != "..",
                segment.utf8.allSatisfy({ Self.allowed($0) })
            else { return nil }
        }
        self.path = path
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
        func `is`(_ candidate: String) -> Bool {
            suffix.count == candidate.utf8.count && zip(suffix, candidate.utf8).allSatisfy { Self.lowercased($0) == $1 }
        }
        if `is`("jpg") || `is`("jpeg") { return "image/jpeg" }
        if `is`("png") { return "image/png" }
        if `is`("heic") { return "image/heic" }
        if `is`("mp4") { return "video/mp4" }
        if `is`("mov") { return "video/quicktime" }
        if `is`("webp") { return "image/webp" }
        return "application/octet-stream"
    }

    /// An ASCII letter in lower case; any other byte as it is.
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
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

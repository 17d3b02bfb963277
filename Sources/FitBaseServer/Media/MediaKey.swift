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
        switch path.split(separator: ".").last?.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "heic": "image/heic"
        case "mp4": "video/mp4"
        case "mov": "video/quicktime"
        case "webp": "image/webp"
        default: "application/octet-stream"
        }
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

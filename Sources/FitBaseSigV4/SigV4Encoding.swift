/// The percent-encoding SigV4 prescribes: RFC 3986 unreserved characters as they are, every other byte of the UTF-8
/// text as `%XX` with upper-case hex.
enum SigV4Encoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// `text` encoded; `/` stays as it is when `keepingSlash`.
    static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A decoded path encoded segment by segment (its slashes kept).
    static func encodePath(_ path: String) -> String {
        encode(path, keepingSlash: true)
    }

    /// The canonical query string: each name and value encoded, sorted by encoded name then encoded value, joined
    /// with `&`.
    static func canonicalQuery(_ items: [SigV4Request.QueryItem]) -> String {
        items
            .map { (encode($0.name), encode($0.value)) }
            .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// `path` with `.` and `..` segments resolved and empty segments dropped (RFC 3986 section 5.2.4 as AWS applies
    /// it to every service but S3); a trailing slash stays.
    static func normalize(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": if !segments.isEmpty { segments.removeLast() }
            default: segments.append(segment)
            }
        }
        var normalized = "/" + segments.joined(separator: "/")
        let last = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        if !segments.isEmpty, path.hasSuffix("/") || last == "." || last == ".." {
            normalized += "/"
        }
        return normalized
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}

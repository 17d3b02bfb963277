/// The few elements FitBase reads from S3's XML answers (upload ids, listed keys, error codes): flat, known tags, no
/// attributes on them, the five predefined entities and `&#34;`.
///
/// Pure parsing over the standard library, so `Fuzz/S3XML` compiles it alone. Read from the answer's UTF-8 bytes in
/// one pass each, not through `String`'s searches (which compare characters, so a tag followed by a combining mark
/// would not be found, nor an entity before one).
enum S3XML {
    /// The text inside each `<tag>…</tag>` in `document`, entities decoded.
    static func values(of tag: String, in document: String) -> [String] {
        contents(of: tag, in: document).map(unescape)
    }

    /// The XML inside each `<tag>…</tag>` in `document`, as written (entities kept): an element that holds others
    /// (`Contents`), whose ``values(of:in:)`` are then read from it, decoded once.
    static func elements(of tag: String, in document: String) -> [String] {
        contents(of: tag, in: document).map { String(decoding: $0, as: UTF8.self) }
    }

    /// One page of a `ListObjectsV2` answer: each object's key and size (a size missing or negative reads as 0), and
    /// the token of the next page when the answer is truncated.
    struct ListPage: Equatable {
        var objects: [(key: String, size: Int64)]
        var next: String?

        static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.next == rhs.next && lhs.objects.elementsEqual(rhs.objects) { $0.key == $1.key && $0.size == $1.size }
        }
    }

    /// The page `document` lists; entries without a key are skipped. Each `Contents` is read undecoded and its fields
    /// decoded once.
    static func listPage(_ document: String) -> ListPage {
        var objects: [(key: String, size: Int64)] = []
        for entry in elements(of: "Contents", in: document) {
            guard let key = values(of: "Key", in: entry).first else { continue }
            objects.append((key, max(0, values(of: "Size", in: entry).first.flatMap { Int64($0) } ?? 0)))
        }
        let truncated = values(of: "IsTruncated", in: document).first == "true"
        return ListPage(objects: objects, next: truncated ? values(of: "NextContinuationToken", in: document).first : nil)
    }

    private static func contents(of tag: String, in document: String) -> [ArraySlice<UInt8>] {
        let open = Array("<\(tag)>".utf8), close = Array("</\(tag)>".utf8)
        let bytes = Array(document.utf8)
        var found: [ArraySlice<UInt8>] = []
        var from = 0
        while let start = firstIndex(of: open, in: bytes, from: from),
            let end = firstIndex(of: close, in: bytes, from: start + open.count)
        {
            found.append(bytes[(start + open.count)..<end])
            from = end + close.count
        }
        return found
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` escaped.
    static func escape(_ text: String) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): escaped.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): escaped.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): escaped.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): escaped.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): escaped.append(contentsOf: "&apos;".utf8)
            default: escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static let entities: [(name: [UInt8], byte: UInt8)] = [
        (Array("&amp;".utf8), UInt8(ascii: "&")), (Array("&lt;".utf8), UInt8(ascii: "<")),
        (Array("&gt;".utf8), UInt8(ascii: ">")), (Array("&quot;".utf8), UInt8(ascii: "\"")),
        (Array("&apos;".utf8), UInt8(ascii: "'")), (Array("&#34;".utf8), UInt8(ascii: "\"")),
    ]

    /// `text` with each entity replaced by its character, left to right (`&amp;lt;` is `&lt;`); any other `&` kept.
    private static func unescape(_ text: ArraySlice<UInt8>) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == UInt8(ascii: "&"),
                let entity = entities.first(where: { text[index...].starts(with: $0.name) })
            {
                decoded.append(entity.byte)
                index += entity.name.count
            } else {
                decoded.append(text[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Where `needle` first starts in `bytes` at or after `start`; nil when it does not.
    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, start >= 0, start <= bytes.count, needle.count <= bytes.count - start else { return nil }
        for index in start...(bytes.count - needle.count) where bytes[index] == needle[0] {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
        }
        return nil
    }
}

import Foundation
import NIOCore

/// The fields of a submitted form: `application/x-www-form-urlencoded`, or `multipart/form-data` (the catalog import's
/// file), each name with every value it was sent with, in order.
struct ConsoleForm: Sendable {
    private(set) var fields: [String: [String]] = [:]

    /// The first value of `name`, `nil` when absent.
    subscript(_ name: String) -> String? { fields[name]?.first }

    /// Every value of `name` (checkboxes sharing a name).
    func all(_ name: String) -> [String] { fields[name] ?? [] }

    /// `value` trimmed, `nil` when absent or blank.
    func text(_ name: String) -> String? {
        guard let value = self[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    init(fields: [String: [String]] = [:]) {
        self.fields = fields
    }

    /// Reads `body` as labelled by `contentType`; anything unreadable is an empty form (whose missing CSRF token then
    /// refuses it).
    init(body: ByteBuffer, contentType: String?) {
        let label = contentType?.lowercased() ?? ""
        if label.hasPrefix("multipart/form-data"), let boundary = Self.boundary(of: contentType ?? "") {
            self.init(multipart: Data(body.readableBytesView), boundary: boundary)
        } else {
            self.init(urlEncoded: String(buffer: body))
        }
    }

    init(urlEncoded text: String) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            let name = decode(parts[0])
            fields[name, default: []].append(parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    init(multipart data: Data, boundary: String) {
        let delimiter = Data("--\(boundary)".utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        var position = data.startIndex
        var parts: [Range<Data.Index>] = []
        var previous: Data.Index?
        while let found = data.range(of: delimiter, in: position..<data.endIndex) {
            if let previous { parts.append(previous..<found.lowerBound) }
            previous = found.upperBound
            position = found.upperBound
        }
        for range in parts {
            let part = data[range]
            guard let split = part.range(of: headerEnd) else { continue }
            let headers = String(decoding: part[part.startIndex..<split.lowerBound], as: UTF8.self)
            var content = part[split.upperBound..<part.endIndex]
            if content.suffix(2) == Data("\r\n".utf8) { content = content.dropLast(2) }
            guard let name = Self.parameter("name", inHeaders: headers) else { continue }
            fields[name, default: []].append(String(decoding: content, as: UTF8.self))
        }
    }

    private static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            return value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 ? String(value.dropFirst().dropLast()) : value
        }
        return nil
    }

    /// `name="…"` of a part's `Content-Disposition`.
    private static func parameter(_ key: String, inHeaders headers: String) -> String? {
        for line in headers.split(separator: "\r\n") where line.lowercased().hasPrefix("content-disposition:") {
            for piece in line.split(separator: ";").dropFirst() {
                let pair = piece.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == key else { continue }
                return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }
}

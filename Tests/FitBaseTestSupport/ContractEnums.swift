import FitBaseAPI
import Foundation

/// The values `openapi.yaml` lists for a named enum schema (`components/schemas/<name>`, `enum:` written `[a, b]` or as
/// a block list), read from the contract itself: the generated types of the overridden enums are Core's own, so only
/// the document can say what the contract holds.
public func contractEnum(_ schema: String) throws -> [String] {
    let lines = String(decoding: try OpenAPIDocument.load(), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(of: "    \(schema):") else { return [] }
    var index = lines.index(after: start)
    while index < lines.endIndex, lines[index].hasPrefix("      ") || lines[index].isEmpty {
        let line = lines[index].trimmingCharacters(in: .whitespaces)
        if line.hasPrefix("enum:") {
            let inline = line.dropFirst("enum:".count).trimmingCharacters(in: .whitespaces)
            if inline.hasPrefix("[") {
                return inline.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            var values: [String] = []
            index = lines.index(after: index)
            while index < lines.endIndex, lines[index].trimmingCharacters(in: .whitespaces).hasPrefix("- ") {
                values.append(String(lines[index].trimmingCharacters(in: .whitespaces).dropFirst(2)))
                index = lines.index(after: index)
            }
            return values
        }
        index = lines.index(after: index)
    }
    return []
}

import Foundation
import NIOSSL
import Testing

@testable import FitBaseServer

extension MailDeliveryError {
    var isPermanent: Bool {
        if case .permanent = self { true } else { false }
    }

    var reason: String {
        switch self {
        case .transient(let reason), .permanent(let reason): reason
        }
    }
}

/// The ``MailDeliveryError`` `body` throws, or `nil` (recording an issue for any other error).
func deliveryError(_ body: () async throws -> Void) async -> MailDeliveryError? {
    do {
        try await body()
        return nil
    } catch let error as MailDeliveryError {
        return error
    } catch {
        Issue.record(error, "not a MailDeliveryError")
        return nil
    }
}

/// A received message taken apart as a mail client would: headers unfolded with encoded-words decoded, and the parts of
/// its `multipart/alternative` body decoded from quoted-printable, by content type.
struct ParsedMail {
    var headers: [String: String] = [:]
    var parts: [String: String] = [:]

    struct Malformed: Error {
        var reason: String
    }

    init(_ content: String) throws {
        guard let blank = content.range(of: "\r\n\r\n") else { throw Malformed(reason: "no blank line after the headers") }
        headers = Self.headers(String(content[..<blank.lowerBound]))
        guard let type = headers["content-type"], let boundaryStart = type.range(of: "boundary=\"") else {
            throw Malformed(reason: "no multipart boundary")
        }
        let boundary = type[boundaryStart.upperBound...].prefix(while: { $0 != "\"" })
        let sections = content[blank.upperBound...].components(separatedBy: "--\(boundary)")
        guard sections.last == "--\r\n" else { throw Malformed(reason: "no closing boundary") }
        for section in sections.dropFirst().dropLast() {
            guard let partBlank = section.range(of: "\r\n\r\n") else { throw Malformed(reason: "a part without headers") }
            let partHeaders = Self.headers(String(section[..<partBlank.lowerBound]))
            guard partHeaders["content-transfer-encoding"] == "quoted-printable",
                let contentType = partHeaders["content-type"]?.split(separator: ";").first
            else { throw Malformed(reason: "an unexpected part") }
            var body = String(section[partBlank.upperBound...])
            guard body.hasSuffix("\r\n") else { throw Malformed(reason: "a part not ending in CRLF") }
            body.removeLast()
            parts[String(contentType)] = Self.decodeQuotedPrintable(body)
        }
    }

    /// Header names (lower-cased) to unfolded, decoded values.
    private static func headers(_ block: String) -> [String: String] {
        let unfolded = block.trimmingCharacters(in: .newlines).replacingOccurrences(of: "\r\n ", with: " ")
            .replacingOccurrences(of: "\r\n\t", with: " ")
        var headers: [String: String] = [:]
        for line in unfolded.components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[line[..<colon].lowercased()] = decodeHeader(value)
        }
        return headers
    }

    /// A header value with its `=?UTF-8?B?…?=` words decoded; the space between two encoded-words is dropped.
    static func decodeHeader(_ value: String) -> String {
        var result = ""
        var previousWasEncoded: Bool?
        for word in value.components(separatedBy: " ") {
            var decoded: String?
            if word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?="), let data = Data(base64Encoded: String(word.dropFirst(10).dropLast(2))) {
                decoded = String(decoding: data, as: UTF8.self)
            }
            if let previous = previousWasEncoded, !(previous && decoded != nil) { result += " " }
            result += decoded ?? word
            previousWasEncoded = decoded != nil
        }
        return result
    }

    static func decodeQuotedPrintable(_ text: String) -> String {
        let bytes = Array(text.replacingOccurrences(of: "=\r\n", with: "").utf8)
        var decoded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let hex = index + 2 < bytes.count ? String(decoding: bytes[index + 1...index + 2], as: UTF8.self) : ""
            if bytes[index] == UInt8(ascii: "="), let byte = UInt8(hex, radix: 16) {
                decoded.append(byte)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    /// An RFC 5322 date as the mailer writes it.
    static func date(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter.date(from: text)
    }
}

import Foundation

/// An e-mail address with an optional display name, parsed from `user@example.com` or `Name <user@example.com>`.
///
/// Only what the mailer needs to send safely: an ASCII dot-atom local part and a host name (no quoted local parts, no
/// address literals, no internationalised addresses). Nothing parsed can carry a line break into a header or an SMTP
/// command.
struct MailAddress: Sendable, Equatable {
    /// The part before `<`, unquoted; `nil` for a bare address.
    var displayName: String?
    /// `user@example.com`, as it goes into `MAIL FROM:<…>` and `RCPT TO:<…>`.
    var address: String

    /// The domain after `@`.
    var domain: Substring { address[address.index(after: address.lastIndex(of: "@")!)...] }

    /// Parses `user@example.com`, `<user@example.com>`, `Name <user@example.com>` or `"Name, Inc." <user@example.com>`;
    /// `nil` when the text is anything else.
    init?(parsing text: String) {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard text.hasSuffix(">") else {
            guard Self.isValidAddress(text) else { return nil }
            self.address = text
            return
        }
        guard let open = text.lastIndex(of: "<") else { return nil }
        let address = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
        var name = text[..<open].trimmingCharacters(in: .whitespaces)
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            guard let unquoted = Self.unquoted(name.dropFirst().dropLast()) else { return nil }
            name = unquoted
        }
        guard Self.isValidAddress(address), name.count <= 200, !name.unicodeScalars.contains(where: Self.isControl) else {
            return nil
        }
        self.displayName = name.isEmpty ? nil : name
        self.address = address
    }

    /// The value of a `From:` or `To:` header: the address, after the display name as an atom phrase, a quoted string or
    /// RFC 2047 encoded-words.
    var headerValue: String {
        guard let displayName else { return address }
        let phrase: String
        if !displayName.unicodeScalars.allSatisfy(\.isASCII) {
            phrase = MIMEEncoding.encodedWords(displayName)
        } else if displayName.unicodeScalars.allSatisfy({ $0 == " " || Self.isAtext($0) }) {
            phrase = displayName
        } else {
            phrase = "\"" + displayName.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "\(phrase) <\(address)>"
    }

    /// Whether `text` is `local@domain` with a dot-atom local part and a host name of letters, digits and hyphens.
    private static func isValidAddress(_ text: String) -> Bool {
        guard text.utf8.count <= 254, let at = text.lastIndex(of: "@") else { return false }
        let local = text[..<at]
        let domain = text[text.index(after: at)...]
        guard local.utf8.count <= 64, isDotSeparated(local, allowing: isAtext) else { return false }
        guard domain.utf8.count <= 253, isDotSeparated(domain, allowing: { isLetterOrDigit($0) || $0 == "-" }) else { return false }
        return domain.split(separator: ".").allSatisfy { !$0.hasPrefix("-") && !$0.hasSuffix("-") && $0.utf8.count <= 63 }
    }

    /// Non-empty parts between single dots, each made only of allowed characters.
    private static func isDotSeparated(_ text: Substring, allowing isAllowed: (Unicode.Scalar) -> Bool) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.allSatisfy { !$0.isEmpty && $0.unicodeScalars.allSatisfy(isAllowed) }
    }

    /// RFC 5322 `atext`: ASCII letters, digits and ``!#$%&'*+-/=?^_`{|}~``.
    private static func isAtext(_ scalar: Unicode.Scalar) -> Bool {
        isLetterOrDigit(scalar) || "!#$%&'*+-/=?^_`{|}~".unicodeScalars.contains(scalar)
    }

    private static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }

    /// The content of a quoted string with `\x` escapes resolved; `nil` when a quote is left unescaped.
    private static func unquoted(_ content: Substring) -> String? {
        var result = ""
        var escaping = false
        for character in content {
            if escaping {
                result.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "\"" {
                return nil
            } else {
                result.append(character)
            }
        }
        return escaping ? nil : result
    }
}

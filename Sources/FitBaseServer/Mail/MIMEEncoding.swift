import Foundation

/// The two MIME encodings the mailer writes, both 7-bit so that any SMTP server carries them unchanged: quoted-printable
/// bodies (RFC 2045) and encoded-word headers (RFC 2047).
enum MIMEEncoding {
    /// `text` as UTF-8 quoted-printable with CRLF line ends and no line longer than 76 characters.
    ///
    /// Line breaks (`\n`, `\r\n` or `\r`) become CRLF; `=`, control characters, non-ASCII bytes and whitespace at the end
    /// of a line become `=XX`; longer lines are split with soft line breaks (`=` at the end).
    static func quotedPrintable(_ text: String) -> String {
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false)
        return lines.map { quotedPrintableLine(Array($0.utf8)) }.joined(separator: "\r\n")
    }

    /// One input line, split with soft line breaks so that each output line has at most 76 characters.
    private static func quotedPrintableLine(_ bytes: [UInt8]) -> String {
        var output = ""
        var lineLength = 0
        for (index, byte) in bytes.enumerated() {
            let isLast = index == bytes.count - 1
            let isWhitespace = byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
            let isLiteral = (33...126).contains(byte) && byte != UInt8(ascii: "=") || isWhitespace && !isLast
            let token = isLiteral ? String(UnicodeScalar(byte)) : "=" + hexByte(byte)
            // Keep room for the `=` of a soft break unless this token ends the line.
            let limit = isLast ? 76 : 75
            if lineLength + token.count > limit {
                output += "=\r\n"
                lineLength = 0
            }
            output += token
            lineLength += token.count
        }
        return output
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// `text` as RFC 2047 `=?UTF-8?B?…?=` words of at most 75 characters each, joined by CRLF and a space (folding
    /// whitespace, which decoders drop between encoded-words). No character is split across two words.
    static func encodedWords(_ text: String) -> String {
        // 45 bytes of UTF-8 make 60 base64 characters: with `=?UTF-8?B?` and `?=` a word is 72 characters.
        let maximumBytes = 45
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in text.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > maximumBytes {
                words.append(encodedWord(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(encodedWord(chunk)) }
        return words.joined(separator: "\r\n ")
    }

    private static func encodedWord(_ bytes: [UInt8]) -> String {
        "=?UTF-8?B?\(Data(bytes).base64EncodedString())?="
    }
}

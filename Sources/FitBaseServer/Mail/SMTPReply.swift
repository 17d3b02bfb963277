/// One reply of an SMTP server: a three-digit code and one or more lines of text (`250-first`, …, `250 last`).
struct SMTPReply: Sendable, Equatable, CustomStringConvertible {
    var code: Int
    /// The text of each line after the code and the separator.
    var lines: [String]

    /// 2xx: the command succeeded.
    var isPositive: Bool { (200..<300).contains(code) }

    /// The code and the lines joined by spaces, as in an error message: `550 5.1.1 <bob@example.com>: unknown`.
    var description: String { ([String(code)] + lines.filter { !$0.isEmpty }).joined(separator: " ") }

    /// One line of a reply as read off the wire, without its line end.
    struct Line: Equatable {
        var code: Int
        var text: String
        /// `false` for `250-…`, which more lines follow; `true` for `250 …` or a bare `250`.
        var isLast: Bool

        /// Parses `ddd text`, `ddd-text` or `ddd`, with a code from 200 to 599; `nil` when the line is anything else.
        init?(_ line: Substring) {
            let digits = line.prefix(3)
            guard digits.count == 3, digits.allSatisfy(\.isASCII), let code = Int(digits), (200...599).contains(code) else {
                return nil
            }
            let rest = line.dropFirst(3)
            switch rest.first {
            case nil: isLast = true
            case " ": isLast = true
            case "-": isLast = false
            default: return nil
            }
            self.code = code
            self.text = String(rest.dropFirst())
        }
    }
}

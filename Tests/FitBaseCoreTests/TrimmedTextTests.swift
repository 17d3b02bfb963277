import FitBaseCore
import Foundation
import Testing

/// Core trims without Foundation's `CharacterSet`, and must trim exactly what it trimmed on the server before.
@Suite struct TrimmedTextTests {
    /// Every whitespace-like scalar lies below U+3100; two format characters beyond it are checked too.
    static let scalars = (0...0x3100).compactMap(Unicode.Scalar.init) + ["\u{FEFF}", "\u{1D173}"]

    @Test func spacesAndTabsAreFoundationsWhitespaces() {
        let differing = Self.scalars.filter { $0.isSpaceOrTab != String($0).trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(differing == [])
    }

    @Test func whitespaceOrNewlineIsFoundationsWhitespacesAndNewlines() {
        let differing = Self.scalars.filter { $0.isWhitespaceOrNewline != String($0).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        #expect(differing == [])
    }

    @Test func trimmingWorksScalarByScalarLikeFoundation() {
        for text in [" \u{301}a ", "a \u{301}", "\u{200B}\u{3000}name\u{A0}\n", "", " \t ", "\nline\n"] {
            #expect(text.trimmingScalars(where: \.isSpaceOrTab) == text.trimmingCharacters(in: .whitespaces))
            #expect(text.trimmingScalars(where: \.isWhitespaceOrNewline) == text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}

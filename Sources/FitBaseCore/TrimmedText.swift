extension String {
    /// The text without the leading and trailing Unicode scalars `isTrimmed` accepts, scalar by scalar as Foundation's
    /// `trimmingCharacters(in:)` trims (a combining mark after a trimmed space stays).
    package func trimmingScalars(where isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }), let last = scalars.lastIndex(where: { !isTrimmed($0) }) else {
            return ""
        }
        return String(scalars[first...last])
    }
}

extension Unicode.Scalar {
    /// In Foundation's `CharacterSet.whitespaces`: a space separator, the tab, or the zero width space (which
    /// Foundation still counts as a space).
    package var isSpaceOrTab: Bool {
        properties.generalCategory == .spaceSeparator || self == "\t" || self == "\u{200B}"
    }

    /// In Foundation's `CharacterSet.whitespacesAndNewlines`: Unicode whitespace (spaces, tabs, line and paragraph
    /// breaks) or the zero width space.
    package var isWhitespaceOrNewline: Bool {
        properties.isWhitespace || self == "\u{200B}"
    }
}

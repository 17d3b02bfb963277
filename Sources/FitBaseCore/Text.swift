extension StringProtocol {
    /// The text without leading and trailing whitespace and newlines (FoundationEssentials has no `trimmingCharacters`).
    package var trimmingWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else {
            return ""
        }
        return String(self[first...last])
    }
}

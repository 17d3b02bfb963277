extension String {
    /// Whether the text is written into a JSON string as it is, by every writer FitBase uses: printable ASCII with no
    /// quote or backslash (the only characters of that range `JSONEncoder` escapes, slashes aside, which FitBase's
    /// encoders leave as they are). Hand-written JSON takes its fast path on such text and leaves the rest to an
    /// encoder, so the bytes never differ.
    var isPlainJSONText: Bool {
        // Over the contiguous bytes (a native string's are): `utf8.allSatisfy` walked an index at a time.
        var text = self
        return text.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte > 0x7E || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            return true
        }
    }
}

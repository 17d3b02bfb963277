extension String {
    /// Whether the text is written into a JSON string as it is, by every writer FitBase uses: printable ASCII with no
    /// quote or backslash (the only characters of that range `JSONEncoder` escapes, slashes aside, which FitBase's
    /// encoders leave as they are). Hand-written JSON takes its fast path on such text and leaves the rest to an
    /// encoder, so the bytes never differ.
    var isPlainJSONText: Bool {
        utf8.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }
}

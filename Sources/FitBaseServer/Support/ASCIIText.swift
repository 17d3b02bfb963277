/// ASCII text read from its bytes, for request paths that must not copy strings (a media link's token and range).
enum ASCIIText {
    /// A decimal number of 1–18 digits and nothing else: no sign, no spaces.
    static func decimal(_ digits: Substring.UTF8View) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// Whether `bytes` spell `word` (written in lower case), their ASCII letters in either case.
    static func equalsIgnoringCase(_ bytes: Substring.UTF8View, _ word: StaticString) -> Bool {
        let word = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        return bytes.count == word.count && zip(bytes, word).allSatisfy { byte, letter in
            ((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte) == letter
        }
    }
}

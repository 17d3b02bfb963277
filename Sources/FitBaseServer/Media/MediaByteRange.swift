/// A byte range as HTTP's `Range: bytes=…` asks for it (one range).
///
/// Pure parsing over the standard library (with ``ASCIIText``), so `Fuzz/Range` compiles it alone. Every number is
/// the client's: at most 18 digits (a 19-digit one could pass `Int64.max`), and what is worked out of one stays within
/// `0..<size` without a sum or difference that can overflow.
enum MediaByteRange: Sendable, Equatable {
    /// `bytes=first-` or `bytes=first-last`.
    case from(Int64, through: Int64?)
    /// `bytes=-count`: the last `count` bytes.
    case suffix(Int64)

    /// The range of a `Range` header value, nil for anything but one well-formed byte range (the header is then
    /// ignored and the whole object is sent, as RFC 9110 allows): several ranges, a last before the first, a number
    /// of more than 18 digits, a sign, a space inside.
    init?(header: String) {
        // Read from the bytes (no trimming or lower-casing copies): a player sends one of these with every read.
        var value = header.utf8[...]
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while let first = value.first, isBlank(first) { value = value.dropFirst() }
        while let last = value.last, isBlank(last) { value = value.dropLast() }
        guard ASCIIText.equalsIgnoringCase(value.prefix(6), "bytes=") else { return nil }
        let spec = value.dropFirst(6)
        guard let dash = spec.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        let first = ASCIIText.decimal(spec[..<dash]), last = ASCIIText.decimal(spec[spec.index(after: dash)...])
        let firstIsEmpty = dash == spec.startIndex, lastIsEmpty = spec.index(after: dash) == spec.endIndex
        if firstIsEmpty {
            guard let count = last, count > 0 else { return nil }
            self = .suffix(count)
        } else {
            guard let start = first else { return nil }
            if lastIsEmpty {
                self = .from(start, through: nil)
            } else {
                guard let end = last, end >= start else { return nil }
                self = .from(start, through: end)
            }
        }
    }

    /// The bytes of an object of `size` this range covers, nil when none (an empty object, a start at or past the
    /// end, or a range no header makes: a negative start or count, a last before the first). What it returns lies in
    /// `0..<size` and is not empty.
    func resolved(size: Int64) -> ClosedRange<Int64>? {
        guard size > 0 else { return nil }
        switch self {
        case .from(let start, let end):
            guard start >= 0, start < size else { return nil }
            guard let end else { return start...(size - 1) }
            guard end >= start else { return nil }
            return start...min(end, size - 1)
        case .suffix(let count):
            guard count > 0 else { return nil }
            // `size - count` cannot overflow: both are positive.
            return max(0, size - count)...(size - 1)
        }
    }

    /// The `Range` header value that asks for this range.
    var headerValue: String {
        switch self {
        case .from(let start, let end): "bytes=\(start)-\(end.map(String.init) ?? "")"
        case .suffix(let count): "bytes=-\(count)"
        }
    }
}

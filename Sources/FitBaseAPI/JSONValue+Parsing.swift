import Foundation

extension JSONValue {
    /// The JSON value `bytes` hold (RFC 8259: one value, optional white space around it), or `nil` when they are not
    /// valid JSON, are not UTF-8, nest deeper than 256 levels, hold a number no `Double` can represent, or repeat a key
    /// in an object. Numbers that are whole (`30`, `30.0`, `3e1`) and fit an `Int` read as `.int`, as `JSONDecoder`
    /// reads them into an `Int`.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        var parser = Parser(bytes: bytes)
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipWhiteSpace()
        return parser.index == bytes.count ? value : nil
    }

    /// ``parse(_:)`` over `data`.
    public static func parse(_ data: Data) -> JSONValue? {
        data.withUnsafeBytes { parse($0) }
    }

    private struct Parser {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhiteSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        private mutating func literal(_ text: StaticString, _ value: JSONValue) -> JSONValue? {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return nil }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return nil }
            index += count
            return value
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard depth < 256 else { return nil }
            skipWhiteSpace()
            guard let current else { return nil }
            switch current {
            case UInt8(ascii: "\""): return string().map { .string($0) }
            case UInt8(ascii: "{"): return object(depth: depth).map { .object($0) }
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return nil
            }
        }

        private mutating func object(depth: Int) -> [String: JSONValue]? {
            index += 1  // {
            var fields: [String: JSONValue] = [:]
            skipWhiteSpace()
            if current == UInt8(ascii: "}") {
                index += 1
                return fields
            }
            while true {
                skipWhiteSpace()
                guard current == UInt8(ascii: "\""), let name = string() else { return nil }
                skipWhiteSpace()
                guard current == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let value = value(depth: depth + 1), fields.updateValue(value, forKey: name) == nil else { return nil }
                skipWhiteSpace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return fields
                default: return nil
                }
            }
        }

        private mutating func array(depth: Int) -> JSONValue? {
            index += 1  // [
            var items: [JSONValue] = []
            skipWhiteSpace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
                skipWhiteSpace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(items)
                default: return nil
                }
            }
        }

        private mutating func string() -> String? {
            index += 1  // opening quote
            let start = index
            // Fast path: no escapes.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { return nil }
                index += 1
            }
            var scalars: [UInt8] = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: scalars, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escaped)
                    case UInt8(ascii: "b"): scalars.append(0x08)
                    case UInt8(ascii: "f"): scalars.append(0x0C)
                    case UInt8(ascii: "n"): scalars.append(0x0A)
                    case UInt8(ascii: "r"): scalars.append(0x0D)
                    case UInt8(ascii: "t"): scalars.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let unit = hex4() else { return nil }
                        var scalar: Unicode.Scalar?
                        if (0xD800..<0xDC00).contains(unit) {
                            // A high surrogate must be followed by an escaped low one.
                            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                            index += 2
                            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                        } else {
                            scalar = Unicode.Scalar(unit)  // nil for a lone low surrogate
                        }
                        guard let scalar else { return nil }
                        scalars.append(contentsOf: UTF8.encode(scalar)!)
                    default: return nil
                    }
                default:
                    if byte < 0x20 { return nil }
                    scalars.append(byte)
                }
            }
            return nil
        }

        private mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        private mutating func digits() -> Int {
            let start = index
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            return index - start
        }

        private mutating func number() -> JSONValue? {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
            } else if digits() == 0 {
                return nil
            }
            var whole = true
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return nil }
                whole = false
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return nil }
                whole = false
            }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if whole, let int = Int(text) { return .int(int) }
            guard let double = Double(text), double.isFinite else { return nil }
            if !whole, double == double.rounded(), let int = Int(exactly: double) { return .int(int) }
            return .double(double)
        }
    }
}

import Foundation

/// A synced record's fields as a JSON object: the `data` of a sync mutation (what a device sends) and of a sync change
/// (what the feed returns), the contract's `SyncRecordData`.
///
/// The generator would type a free-form object as `OpenAPIObjectContainer`, whose values are `any Sendable` sorted out
/// by dynamic casts when coded — most of the CPU of a sync push and pull on both sides. This type (named for the schema
/// in `openapi-generator-config.yaml`) is a plain JSON tree instead, or, on the way out, the record itself, encoded in
/// place with the message around it.
public struct RecordJSON: Codable, Hashable, Sendable {
    private enum Storage: Sendable {
        case fields([String: JSONValue])
        case record(any Encodable & Sendable)
    }

    private let storage: Storage

    /// An object with these fields.
    public init(fields: [String: JSONValue]) {
        storage = .fields(fields)
    }

    /// The record as its `Encodable` form writes it, encoded with the message it is sent in (so by that encoder's
    /// settings: dates, key order).
    public init(record: some Encodable & Sendable) {
        storage = .record(record)
    }

    /// The object in `json`; throws when it is not JSON or not an object.
    public init(json: Data) throws {
        if case .object(let fields)? = JSONValue.parse(json) {
            storage = .fields(fields)
        } else {
            // Not an object we read: Foundation's decoder says why (or reads what ours refuses, a repeated key).
            storage = .fields(try JSONDecoder().decode([String: JSONValue].self, from: json))
        }
    }

    public init(from decoder: any Decoder) throws {
        storage = .fields(try JSONValue.fields(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        switch storage {
        case .fields(let fields): try JSONValue.encode(fields, to: encoder)
        case .record(let record): try record.encode(to: encoder)
        }
    }

    /// The fields. A record given as `Encodable` is encoded for it (dates in RFC 3339, to the second).
    public func fields() throws -> [String: JSONValue] {
        switch storage {
        case .fields(let fields): return fields
        case .record: return try JSONDecoder().decode([String: JSONValue].self, from: jsonData())
        }
    }

    /// The object as JSON text (keys sorted, slashes not escaped).
    public func jsonData() throws -> Data {
        switch storage {
        case .fields(let fields):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(256)
            JSONValue.write(fields, into: &bytes)
            return Data(bytes)
        case .record(let record):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            return try encoder.encode(record)
        }
    }

    /// The object decoded as `type` by `decoder` (whose settings apply: dates, errors with coding paths).
    public func decode<Value: Decodable>(_ type: Value.Type, using decoder: JSONDecoder) throws -> Value {
        try decoder.decode(type, from: jsonData())
    }

    public static func == (lhs: RecordJSON, rhs: RecordJSON) -> Bool {
        (try? lhs.fields()) == (try? rhs.fields())
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(try? fields())
    }
}

/// A JSON value.
public enum JSONValue: Codable, Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        // Strings are most of a record's values, then numbers: tried in that order, so most values cost no thrown error.
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let string = try? single.decode(String.self) {
            self = .string(string)
        } else if let int = try? single.decode(Int.self) {
            self = .int(int)
        } else if let double = try? single.decode(Double.self) {
            self = .double(double)
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let object = try? Self.fields(from: decoder) {
            self = .object(object)
        } else {
            var container = try decoder.unkeyedContainer()
            var items: [JSONValue] = []
            while !container.isAtEnd { items.append(try container.decode(JSONValue.self)) }
            self = .array(items)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let fields):
            try Self.encode(fields, to: encoder)
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        default:
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .array, .object: break
            }
        }
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static func fields(from decoder: any Decoder) throws -> [String: JSONValue] {
        let container = try decoder.container(keyedBy: Key.self)
        var fields: [String: JSONValue] = [:]
        fields.reserveCapacity(container.allKeys.count)
        for key in container.allKeys { fields[key.stringValue] = try container.decode(JSONValue.self, forKey: key) }
        return fields
    }

    static func encode(_ fields: [String: JSONValue], to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in fields { try container.encode(value, forKey: Key(stringValue: name)) }
    }

    // MARK: Writing JSON text

    /// An object as JSON text, keys sorted.
    public static func write(_ fields: [String: JSONValue], into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, name) in fields.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            writeString(name, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            fields[name]!.write(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The value as JSON text (objects with their keys sorted).
    public func write(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): bytes.append(contentsOf: String(value).utf8)
        case .double(let value):
            // Decoded from JSON, so finite; Swift's description is the shortest text that reads back the same.
            if value.isFinite { bytes.append(contentsOf: value.description.utf8) } else { bytes.append(contentsOf: "null".utf8) }
        case .string(let value): Self.writeString(value, into: &bytes)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                item.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let fields): Self.write(fields, into: &bytes)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A string as JSON text: quote, backslash and control characters escaped, everything else as its UTF-8.
    public static func writeString(_ string: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

// MARK: Reading JSON text

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

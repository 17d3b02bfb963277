import Foundation

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

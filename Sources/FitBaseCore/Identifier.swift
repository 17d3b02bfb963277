#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A typed identifier: an `Identifier<User>` cannot be passed where an `Identifier<Workout>` is expected.
///
/// On the wire and in storage it is a plain UUID string; the type parameter exists only for the compiler.
public struct Identifier<Entity>: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The underlying UUID.
    public let rawValue: UUID

    /// Wraps an existing UUID.
    public init(rawValue: UUID) {
        self.rawValue = rawValue
    }

    /// A new random identifier.
    public init() {
        self.rawValue = UUID.random()
    }

    /// Parses a UUID string in any letter case; `nil` when it is not one.
    public init?(_ text: String) {
        guard let uuid = UUID(canonical: text) ?? UUID(uuidString: text) else { return nil }
        self.rawValue = uuid
    }

    /// The canonical lower-case form used on the wire.
    public var description: String { rawValue.lowercasedString }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let uuid = UUID(canonical: text) ?? UUID(uuidString: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "is not a UUID")
        }
        self.rawValue = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension Identifier: Comparable {
    /// Ids order as their canonical text (`description`) does — the order lists of records are given in — worked out
    /// on the UUIDs' bytes without writing either text.
    public static func < (lhs: Identifier, rhs: Identifier) -> Bool {
        withUnsafeBytes(of: lhs.rawValue.uuid) { left in
            withUnsafeBytes(of: rhs.rawValue.uuid) { right in left.lexicographicallyPrecedes(right) }
        }
    }
}

extension UUID {
    /// A random (version 4) UUID from the system's generator (`getrandom` on Linux). Foundation's `UUID()` opens and
    /// closes `/dev/urandom` on Linux for every id, which showed as 3.5 % of the CPU of the cheapest request.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }

    /// The canonical lower-case text (8-4-4-4-12), written in one allocation: ids are formatted for every record
    /// that goes on the wire, and `uuidString.lowercased()` costs two strings each time.
    public var lowercasedString: String {
        text(digits: "0123456789abcdef")
    }

    /// The canonical upper-case text, as `uuidString` writes it, without its `sprintf`.
    public var uppercasedString: String {
        text(digits: "0123456789ABCDEF")
    }

    private func text(digits: StaticString) -> String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            var position = 0
            withUnsafeBytes(of: uuid) { bytes in
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    buffer[position] = digits.utf8Start[Int(byte >> 4)]
                    buffer[position + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    position += 2
                }
            }
            return position
        }
    }

    /// Reads the canonical text (8-4-4-4-12 hex digits, either case) without Foundation's `sscanf`; `nil` for any
    /// other text, which callers then hand to `UUID(uuidString:)` so that exactly the same texts are accepted.
    public init?(canonical text: String) {
        var text = text
        let parsed: uuid_t? = text.withUTF8 { utf8 -> uuid_t? in
            guard utf8.count == 36 else { return nil }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let complete = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard utf8[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                    }
                    guard let high = Self.hexValue(utf8[position]), let low = Self.hexValue(utf8[position + 1]) else { return false }
                    out[index] = high << 4 | low
                    position += 2
                }
                return true
            }
            return complete ? bytes : nil
        }
        guard let parsed else { return nil }
        self.init(uuid: parsed)
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Identifier: LosslessStringConvertible {}

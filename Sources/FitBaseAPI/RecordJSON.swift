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

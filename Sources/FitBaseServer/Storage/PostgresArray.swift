import Foundation
import NIOCore
import PostgresNIO

/// One column of a batch bound as a single PostgreSQL array, for set-based statements: `INSERT … SELECT … FROM
/// unnest(?::uuid[], ?::text[], …)` takes a batch of a thousand rows in a handful of binds instead of eleven thousand,
/// which PostgreSQL would otherwise parse and type-check one by one. Elements may be `nil` (SQL `NULL`, which
/// PostgresNIO's own arrays cannot hold), and `Data` goes as `bytea` (PostgresNIO has no array of `Data`).
///
/// The elements are written in the wire format once, when the array is made, each by its own PostgresNIO encoder: a
/// value is stored exactly as the same value bound alone. PostgreSQL only: SQLite has no arrays, and binding one there
/// fails loudly instead of storing something else.
struct PostgresArray: Encodable, Sendable, PostgresThrowingDynamicTypeEncodable {
    let psqlType: PostgresDataType
    var psqlFormat: PostgresFormat { .binary }
    private let bytes: ByteBuffer

    init<Element: PostgresArrayElement>(_ elements: some Collection<Element?>) throws {
        var bytes = ByteBuffer()
        bytes.reserveCapacity(20 + elements.count * 24)
        // One dimension (none when empty), whether any element is NULL, the elements' type, then the dimension's
        // length and lower bound.
        bytes.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        bytes.writeInteger(elements.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        bytes.writeInteger(Element.psqlType.rawValue)
        if !elements.isEmpty {
            bytes.writeInteger(Int32(elements.count))
            bytes.writeInteger(1, as: Int32.self)
        }
        // Each element is its length (-1 for NULL), then its value.
        for element in elements {
            guard let element else {
                bytes.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = bytes.writerIndex
            bytes.writeInteger(0, as: Int32.self)
            try element.encode(into: &bytes, context: .default)
            bytes.setInteger(Int32(bytes.writerIndex - lengthIndex - 4), at: lengthIndex)
        }
        self.psqlType = Element.arrayType
        self.bytes = bytes
    }

    init<Element: PostgresArrayElement>(_ elements: some Collection<Element>) throws {
        try self.init(elements.lazy.map { Optional($0) })
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) throws {
        byteBuffer.writeImmutableBuffer(bytes)
    }

    /// Refused: only PostgresKit's binary path may bind an array.
    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            self, .init(codingPath: encoder.codingPath, debugDescription: "A PostgreSQL array can only be bound on PostgreSQL.")
        )
    }
}

/// A value ``PostgresArray`` can hold, and the type of an array of it.
protocol PostgresArrayElement: PostgresEncodable {
    static var arrayType: PostgresDataType { get }
}

extension UUID: PostgresArrayElement {
    static var arrayType: PostgresDataType { .uuidArray }
}

extension Int64: PostgresArrayElement {
    static var arrayType: PostgresDataType { .int8Array }
}

extension Bool: PostgresArrayElement {
    static var arrayType: PostgresDataType { .boolArray }
}

extension String: PostgresArrayElement {
    static var arrayType: PostgresDataType { .textArray }
}

extension Date: PostgresArrayElement {
    static var arrayType: PostgresDataType { .timestamptzArray }
}

extension Data: PostgresArrayElement {
    static var arrayType: PostgresDataType { .byteaArray }
}

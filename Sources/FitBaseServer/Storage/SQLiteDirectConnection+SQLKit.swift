import FitBaseCore
import Foundation
import Logging
import NIOCore
import SQLiteKit
import SQLiteNIO
import SQLKit

/// The connection as SQLKit sees it: SQLiteKit's dialect, encoder and decoder, so every store's builders produce the
/// statements, and every value is stored and read back, exactly as through SQLiteKit over SQLiteNIO.
extension SQLiteDirectConnection: SQLDatabase {
    var dialect: any SQLDialect {
        FitBaseSQLiteDialect()
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        try run(query, onRow)
    }

    /// SQLKit's older interface; the statement has run by the time the future is returned.
    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        do {
            try run(query, onRow)
            return eventLoop.makeSucceededVoidFuture()
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }

    private func run(_ query: any SQLExpression, _ onRow: (any SQLRow) -> ()) throws {
        let (sql, binds) = serialize(query)
        if let queryLogLevel {
            logger.log(level: queryLogLevel, "Executing query", metadata: ["sql": .string(sql), "binds": .array(binds.map { .string("\($0)") })])
        }
        let decoder = self.decoder
        try run(sql, binds.map(sqliteData)) { columns, values in
            onRow(SQLiteDirectRow(columns: columns, values: values, decoder: decoder))
        }
    }
}

extension SQLiteDirectConnection {
    /// A bind as ``SQLiteDataEncoder`` stores it, with the common types converted directly: the encoder's
    /// protocol-conformance checks, and the `sprintf` behind a UUID's `uuidString` (UUIDs are stored as that text),
    /// were 8 % of the CPU of a health upload.
    func sqliteData(_ bind: any Encodable) throws -> SQLiteData {
        switch bind {
        case let text as String: .text(text)
        case let id as UUID: .text(id.uppercasedString)
        case let number as Int: .integer(number)
        case let instant as Date: .float(instant.timeIntervalSince1970)
        case let flag as Bool: .integer(flag ? 1 : 0)
        case let bytes as Data: .blob(ByteBuffer(bytes: bytes))
        case let instant as Date?: instant.map { .float($0.timeIntervalSince1970) } ?? .null
        case let text as String?: text.map { .text($0) } ?? .null
        case let number as Int?: number.map { .integer($0) } ?? .null
        default: try encoder.encode(bind)
        }
    }
}

/// A result row; its values decode through SQLiteKit's ``SQLiteDataDecoder``, as SQLiteKit's rows do.
struct SQLiteDirectRow: SQLRow {
    let columns: SQLiteColumns
    let values: [SQLiteData]
    let decoder: SQLiteDataDecoder

    var allColumns: [String] {
        columns.names
    }

    func contains(column: String) -> Bool {
        columns.offset(of: column) != nil
    }

    func decodeNil(column: String) throws -> Bool {
        guard let offset = columns.offset(of: column) else { return true }
        return values[offset] == .null
    }

    /// The types stores read most, and their optionals, are converted as SQLiteKit's decoder converts them but without
    /// its generic walk (a `Decodable` dispatch, an unwrapping decoder for each optional): a quarter of the CPU of
    /// listing twenty workout logs. Any other type, or a stored kind that is not the type's, goes to the decoder (which
    /// refuses a mismatch with its error).
    ///
    /// Rows are read through `any SQLRow`, so this runs unspecialized: the requested type is found with one lookup of
    /// its metadata pointer, and the value, made as that very type, handed back as `D` by a bit cast. Comparing the type
    /// with `String?.self` and the like, or making a `D?` (or anything else generic over `D`) here, has the runtime look
    /// up that type's metadata on every call: 6–8 % of the CPU of listing workout logs.
    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let offset = columns.offset(of: column) else { throw SQLiteMissingColumn(column: column) }
        let value = values[offset]
        guard let (kind, optional) = DirectKind.known[ObjectIdentifier(D.self)] else { return try decoder.decode(D.self, from: value) }
        // `D` is `T`, or `T?` when `optional`: the casts are between identical types.
        func cast<T>(_ converted: T) -> D { optional ? unsafeBitCast(Optional(converted), to: D.self) : unsafeBitCast(converted, to: D.self) }
        switch (value, kind) {
        case (.text(let text), .string): return cast(text)
        // A UUID is stored as its text; read without Foundation's `sscanf` when it is in canonical form.
        case (.text(let text), .uuid): if let id = UUID(canonical: text) { return cast(id) }
        case (.integer(let integer), .int): return cast(integer)
        case (.integer(let integer), .int64): return cast(Int64(integer))
        case (.integer(let integer), .bool) where integer == 0 || integer == 1: return cast(integer == 1)
        case (.integer(let integer), .date): return cast(Self.date(Double(integer)))
        case (.float(let double), .double): return cast(double)
        case (.float(let double), .date): return cast(Self.date(double))
        case (.blob(let blob), .data): return cast(Data(blob.readableBytesView))
        case (.null, _) where optional: return kind.none(as: D.self)
        default: break
        }
        return try decoder.decode(D.self, from: value)
    }

    private enum DirectKind {
        case string, uuid, int, int64, bool, date, double, data

        /// Each type ``decode(column:as:)`` converts itself, and its optional, by metadata pointer.
        static let known: [ObjectIdentifier: (DirectKind, optional: Bool)] = {
            var known: [ObjectIdentifier: (DirectKind, optional: Bool)] = [:]
            func add<T>(_: T.Type, _ kind: DirectKind) {
                known[ObjectIdentifier(T.self)] = (kind, false)
                known[ObjectIdentifier(T?.self)] = (kind, true)
            }
            add(String.self, .string)
            add(UUID.self, .uuid)
            add(Int.self, .int)
            add(Int64.self, .int64)
            add(Bool.self, .bool)
            add(Date.self, .date)
            add(Double.self, .double)
            add(Data.self, .data)
            return known
        }()

        /// `nil` as `D`, which is this kind's optional.
        func none<D>(as _: D.Type) -> D {
            func none<T>(_: T.Type) -> D { unsafeBitCast(T?.none, to: D.self) }
            return switch self {
            case .string: none(String.self)
            case .uuid: none(UUID.self)
            case .int: none(Int.self)
            case .int64: none(Int64.self)
            case .bool: none(Bool.self)
            case .date: none(Date.self)
            case .double: none(Double.self)
            case .data: none(Data.self)
            }
        }
    }

    /// Seconds since 1970 as SQLiteNIO reads an instant: rounded to the microsecond since the reference date.
    private static func date(_ secondsSince1970: Double) -> Date {
        Date(timeIntervalSinceReferenceDate: (((secondsSince1970 - Date.timeIntervalBetween1970AndReferenceDate) * 1e6).rounded() / 1e6))
    }
}

/// A row was asked for a column its statement does not return.
struct SQLiteMissingColumn: Error, CustomStringConvertible {
    let column: String

    var description: String {
        "no column \"\(column)\" in the row"
    }
}

/// SQLiteKit's dialect, with identifiers quoted without SQLKit's escaping pass.
///
/// SQLKit doubles any quote inside an identifier with `String.replacing`, which on Linux took 11 % of the CPU of a
/// signed-in write (every table and column name of every statement goes through it). FitBase's identifiers are names
/// written in its code, never input, and none contains a quote: they are written between quotes as they are.
struct FitBaseSQLiteDialect: SQLDialect {
    private static let base = SQLiteDialect()

    var name: String { Self.base.name }
    var identifierQuote: any SQLExpression { IdentifierQuote() }
    var literalStringQuote: any SQLExpression { Self.base.literalStringQuote }
    func bindPlaceholder(at position: Int) -> any SQLExpression { Self.base.bindPlaceholder(at: position) }
    func literalBoolean(_ value: Bool) -> any SQLExpression { Self.base.literalBoolean(value) }
    var literalDefault: any SQLExpression { Self.base.literalDefault }
    var supportsIfExists: Bool { Self.base.supportsIfExists }
    var supportsDropBehavior: Bool { Self.base.supportsDropBehavior }
    var supportsAutoIncrement: Bool { Self.base.supportsAutoIncrement }
    var autoIncrementClause: any SQLExpression { Self.base.autoIncrementClause }
    var enumSyntax: SQLEnumSyntax { Self.base.enumSyntax }
    var triggerSyntax: SQLTriggerSyntax { Self.base.triggerSyntax }
    var alterTableSyntax: SQLAlterTableSyntax { Self.base.alterTableSyntax }
    var upsertSyntax: SQLUpsertSyntax { Self.upsert }
    var supportsReturning: Bool { Self.returning }
    var unionFeatures: SQLUnionFeatures { Self.base.unionFeatures }
    func customDataType(for dataType: SQLDataType) -> (any SQLExpression)? { Self.base.customDataType(for: dataType) }
    func nestedSubpathExpression(in column: any SQLExpression, for path: [String]) -> (any SQLExpression)? {
        Self.base.nestedSubpathExpression(in: column, for: path)
    }

    /// Asked of the linked library once, not on every statement.
    private static let upsert = base.upsertSyntax
    private static let returning = base.supportsReturning

    /// A double quote; not an `SQLRaw`, which is what makes SQLKit skip its escaping pass.
    private struct IdentifierQuote: SQLExpression {
        func serialize(to serializer: inout SQLSerializer) {
            serializer.write("\"")
        }
    }
}

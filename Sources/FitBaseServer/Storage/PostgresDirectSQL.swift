import Foundation
import Logging
import NIOCore
import PostgresKit
import PostgresNIO
import SQLKit

/// One PostgreSQL connection as an `SQLDatabase`: PostgresKit's, with its generic paths skipped where the outcome is
/// the same.
///
/// PostgresKit decodes every column through its `Decodable` bridge (a dynamic conformance check, a coding path and
/// the cell's workarounds for Fluent, per column): 14 % of the CPU of a user's own history list on PostgreSQL. Here
/// the columns stores read (text, integers, floats, booleans, UUIDs, times, bytes, and their optionals) are decoded by
/// PostgresNIO straight from the cell, and the binds that PostgresKit would hand to PostgresNIO as they are (nil, or a
/// value that encodes itself) are handed over without its checks. Anything else (a bind only the `Encodable` bridge can
/// encode, a column of another type such as `numeric`) goes through PostgresKit exactly as before.
struct PostgresDirectSQL: SQLDatabase {
    let connection: PostgresConnection
    /// PostgresKit's database on the same connection: the path for everything not handled here.
    let kit: any SQLDatabase

    init(_ connection: PostgresConnection) {
        self.connection = connection
        self.kit = connection.sql()
    }

    var logger: Logger { kit.logger }
    var eventLoop: any EventLoop { kit.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { kit.version }
    var dialect: any SQLDialect { kit.dialect }
    var queryLogLevel: Logger.Level? { kit.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        kit.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        let (sql, binds) = serialize(query)
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            guard try Self.append(bind, to: &bindings) else { return try await kit.execute(sql: query, onRow) }
        }
        if let level = queryLogLevel {
            logger.log(level: level, "Executing query", metadata: ["sql": .string(sql), "binds": .array(binds.map { .string("\($0)") })])
        }
        _ = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) { row in
            onRow(PostgresDirectRow(row: row, columns: row.makeRandomAccess()))
        }.get()
    }

    /// Appends `value` as PostgresKit's fast paths would; `false` when only its `Encodable` bridge can encode it.
    private static func append<Value: Encodable>(_ value: Value, to bindings: inout PostgresBindings) throws -> Bool {
        if (value as Optional<Any>) == nil {
            bindings.appendNull()
        } else if let direct = value as? any PostgresThrowingDynamicTypeEncodable {
            try bindings.append(direct, context: .default)
        } else {
            return false
        }
        return true
    }
}

/// A row of ``PostgresDirectSQL``: common column types decoded by PostgresNIO directly, the rest by PostgresKit.
struct PostgresDirectRow: SQLRow {
    let row: PostgresRow
    let columns: PostgresRandomAccessRow

    var allColumns: [String] { columns.map(\.columnName) }

    func contains(column: String) -> Bool {
        columns.contains(column)
    }

    func decodeNil(column: String) throws -> Bool {
        !columns.contains(column) || columns[column].bytes == nil
    }

    func decode<T: Decodable>(column: String, as type: T.Type) throws -> T {
        if columns.contains(column), let value = try Self.direct(T.self, columns[column]) { return value }
        return try row.sql().decode(column: column, as: T.self)
    }

    /// The cell as `T` when `T` and the column's type are a pair handled here; `nil` otherwise.
    private static func direct<T>(_: T.Type, _ cell: PostgresCell) throws -> T? {
        switch cell.dataType {
        case .text, .varchar: try value(String.self, as: T.self, cell)
        case .int8, .int4, .int2: try value(Int.self, as: T.self, cell)
        case .float8, .float4: try value(Double.self, as: T.self, cell)
        case .bool: try value(Bool.self, as: T.self, cell)
        case .uuid: try value(UUID.self, as: T.self, cell)
        case .timestamptz, .timestamp: try value(Date.self, as: T.self, cell)
        case .bytea: try value(Data.self, as: T.self, cell)
        default: nil
        }
    }

    /// The cell decoded as `Value` when `T` is `Value` or `Value?`; `nil` for any other `T`.
    private static func value<Value: PostgresDecodable, T>(_: Value.Type, as _: T.Type, _ cell: PostgresCell) throws -> T? {
        if T.self == Value.self {
            return unsafeBitCast(try cell.decode(Value.self, context: .default), to: T.self)
        }
        if T.self == Value?.self {
            let optional: Value? = cell.bytes == nil ? nil : try cell.decode(Value.self, context: .default)
            return unsafeBitCast(optional, to: T.self)
        }
        return nil
    }
}

import Logging
import NIOCore
import SQLiteKit
import SQLiteNIO
import SQLKit

/// The connection as SQLKit sees it: SQLiteKit's dialect, encoder and decoder, so every store's builders produce the
/// statements, and every value is stored and read back, exactly as through SQLiteKit over SQLiteNIO.
extension SQLiteDirectConnection: SQLDatabase {
    var dialect: any SQLDialect {
        SQLiteDialect()
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
        try run(sql, binds.map { try encoder.encode($0) }) { columns, values in
            onRow(SQLiteDirectRow(columns: columns, values: values, decoder: decoder))
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

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let offset = columns.offset(of: column) else { throw SQLiteMissingColumn(column: column) }
        return try decoder.decode(D.self, from: values[offset])
    }
}

/// A row was asked for a column its statement does not return.
struct SQLiteMissingColumn: Error, CustomStringConvertible {
    let column: String

    var description: String {
        "no column \"\(column)\" in the row"
    }
}

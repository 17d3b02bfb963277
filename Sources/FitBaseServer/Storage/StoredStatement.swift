import SQLKit
import Synchronization

/// A statement whose SQL text is written once, for both engines, instead of being built by SQLKit's query builders on
/// every run.
///
/// Building a statement (the builder's expression tree serialized into text, identifier by identifier) was 15 % of the
/// CPU of a signed-in workout log, more than SQLite spent running the statements. The hot statements of the request
/// path are stored instead: the text is written with `?` placeholders, the PostgreSQL text (`$1`, `$2`, …) derived from
/// it once, and a run only hands the text and the binds to the connection — which, on SQLite, finds the statement
/// already prepared (``SQLiteDirectConnection`` keeps them by text). Binds go through the same encoders as
/// ``SQLBind``s, so values are stored and read exactly as the builders store and read them.
///
/// The text must be SQL both engines take the same way: quoted identifiers, `ON CONFLICT … DO UPDATE`, `RETURNING`.
struct StoredStatement: Sendable {
    let sqlite: String
    let postgres: String

    /// `sql` with one `?` per bind (no `?` may appear anywhere else in it).
    init(_ sql: String) {
        self.sqlite = sql
        var postgres = ""
        postgres.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        for character in sql {
            if character == "?" {
                number += 1
                postgres += "$\(number)"
            } else {
                postgres.append(character)
            }
        }
        self.postgres = postgres
    }

    /// A statement only PostgreSQL runs (callers branch on the dialect), written with numbered placeholders
    /// (`$1`, …) so that one bind can appear more than once: a data-modifying `WITH` that does in one round trip what
    /// SQLite does in two statements.
    init(postgresOnly sql: String) {
        self.sqlite = ""
        self.postgres = sql
    }

    /// The statement with its binds, in placeholder order.
    func callAsFunction(_ binds: any Encodable & Sendable...) -> Bound {
        Bound(statement: self, binds: binds)
    }

    /// The statement with its binds, in placeholder order.
    func with(_ binds: [any Encodable & Sendable]) -> Bound {
        Bound(statement: self, binds: binds)
    }

    /// A stored statement with the values for its placeholders.
    struct Bound: SQLExpression {
        let statement: StoredStatement
        let binds: [any Encodable & Sendable]

        func serialize(to serializer: inout SQLSerializer) {
            serializer.write(serializer.dialect.name == "postgresql" ? statement.postgres : statement.sqlite)
            serializer.binds.append(contentsOf: binds)
        }

        func run(on db: any SQLDatabase) async throws {
            try await db.execute(sql: self) { _ in }
        }

        func first(on db: any SQLDatabase) async throws -> (any SQLRow)? {
            try await all(on: db).first
        }

        func all(on db: any SQLDatabase) async throws -> [any SQLRow] {
            let rows = RowCollector()
            try await db.execute(sql: self) { rows.append($0) }
            return rows.rows
        }
    }
}

/// The rows of one statement, gathered as the connection hands them over.
private final class RowCollector: Sendable {
    private let gathered = Mutex<[any SQLRow]>([])

    var rows: [any SQLRow] {
        gathered.withLock { $0 }
    }

    func append(_ row: any SQLRow) {
        gathered.withLock { $0.append(row) }
    }
}

/// A multi-row statement (`INSERT … VALUES (…), (…) …`) stored once per row count: the text for `count` rows is
/// written on first use and kept, so a batch of 250 rows costs a dictionary lookup instead of a builder serializing
/// 2,000 bind placeholders. Callers cap their chunks (every engine limits binds per statement), which bounds how many
/// texts are kept.
final class StoredRowsStatement: Sendable {
    private let head: String
    private let row: String
    private let tail: String
    private let built = Mutex<[Int: StoredStatement]>([:])

    /// `head` up to `VALUES `, one `row` of placeholders (`(?, ?, …)`), and `tail` after the last row (may be empty).
    init(head: String, row: String, tail: String = "") {
        self.head = head
        self.row = row
        self.tail = tail
    }

    /// The statement for `count` rows (at least one) with `binds` (every row's values, row after row).
    func callAsFunction(rows count: Int, _ binds: [any Encodable & Sendable]) -> StoredStatement.Bound {
        let statement = built.withLock { built in
            if let statement = built[count] { return statement }
            let statement = StoredStatement(head + Array(repeating: row, count: count).joined(separator: ", ") + tail)
            built[count] = statement
            return statement
        }
        return statement.with(binds)
    }
}

import SQLKit
import Synchronization

/// The SQLite write transaction a task's body runs in: what the body reads through ``Database/withConnection(_:)``
/// runs on the transaction's connection instead of a pooled one.
///
/// A caller may hold a pooled connection while it calls `transaction` and waits at the write gate. Were the body
/// holding the gate to ask the pool for a connection while such callers hold every one, neither would ever move.
/// Reading on the transaction's own connection needs nothing from anyone, and sees the transaction's own writes.
final class OpenWriteTransaction: Sendable {
    @TaskLocal private static var current: OpenWriteTransaction?

    private let database: ObjectIdentifier
    let connection: any SQLDatabase
    /// False once the body has returned: a task the body left running must not use the connection afterwards.
    private let isOpen = Atomic(true)

    init(of database: Database, on connection: any SQLDatabase) {
        self.database = ObjectIdentifier(database)
        self.connection = connection
    }

    /// The open transaction of `database` the current task runs in, if any.
    static func current(of database: Database) -> OpenWriteTransaction? {
        guard let current, current.database == ObjectIdentifier(database), current.isOpen.load(ordering: .acquiring) else { return nil }
        return current
    }

    /// Runs `body` with this transaction as the task's open one.
    func run<Result>(_ body: () async throws -> Result) async throws -> Result {
        defer { isOpen.store(false, ordering: .releasing) }
        return try await Self.$current.withValue(self) { try await body() }
    }
}

import Logging
import NIOCore
import SQLKit
import Synchronization

/// Up to `capacity` SQLite connections, opened when first needed and lent to one task at a time, and one more that
/// only write transactions use.
///
/// Write transactions (one at a time: ``Database`` queues them in its ``WriteGate``) run on a connection of their own.
/// SQLite drops a connection's whole page cache whenever another connection has written, so a transaction that took
/// whichever pooled connection was free began by reading its pages again (11 reads per workout log), and it waited,
/// holding the write gate, whenever readers held every pooled connection. The write connection is only ever behind the
/// gate: its cache stays warm, and a writer never waits for a reader.
///
/// ``withConnection(_:)`` runs its body in the caller's task, so the caller's task-locals (``RequestScope``,
/// ``TransactionHooks``) stay in place. When every connection is lent, callers wait in arrival order for one to come
/// back, for as long as it takes; a caller cancelled while it waits stops waiting. A connection comes back when the
/// body returns or throws.
final class SQLiteConnectionPool: SQLConnectionPool {
    private let setup: SQLiteConnectionSetup
    private let capacity: Int
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let state = Mutex(State())
    private let nextWaiterID = Atomic<UInt64>(0)
    /// The write connection, once opened; `nil` again after shutdown.
    private let writer = Mutex<(connection: SQLiteDirectConnection?, isShutDown: Bool)>((nil, false))

    init(setup: SQLiteConnectionSetup, capacity: Int, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.setup = setup
        self.capacity = max(1, capacity)
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    func withConnection<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        let connection = try await acquire()
        defer { release(connection) }
        return try await body(connection)
    }

    /// Runs `body` on the write connection, opening it first if needed. Callers take turns (the write gate), so the
    /// connection is never used by two at once.
    func withWriteConnection<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        try await withWriteConnection(rollingBackLeftovers: true, body)
    }

    /// ``withWriteConnection(_:)``; with `rollingBackLeftovers` false a transaction `body` leaves open stays open (a
    /// commit group's, ``GroupCommit``, which its last member ends).
    func withWriteConnection<Result: Sendable>(
        rollingBackLeftovers: Bool, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Result
    ) async throws -> Result {
        let connection = try writer.withLock { writer throws -> SQLiteDirectConnection in
            guard !writer.isShutDown else { throw DatabaseShutDownError() }
            if let connection = writer.connection { return connection }
            let connection = try setup.openWriter(logger: logger, eventLoop: eventLoopGroup.any())
            writer.connection = connection
            return connection
        }
        defer { if rollingBackLeftovers { connection.rollBackLeftoverTransaction() } }
        return try await body(connection)
    }

    /// Closes the idle connections at once and the lent ones as they come back; callers still waiting fail.
    func shutdown() async throws {
        let writer = self.writer.withLock { writer in
            writer.isShutDown = true
            defer { writer.connection = nil }
            return writer.connection
        }
        writer?.close()
        let (idle, waiters) = state.withLock { state in
            state.isShutDown = true
            state.opened -= state.idle.count
            defer { (state.idle, state.waiters) = ([], []) }
            return (state.idle, state.waiters)
        }
        for connection in idle { connection.close() }
        for waiter in waiters { waiter.continuation.resume(throwing: DatabaseShutDownError()) }
    }

    private func acquire() async throws -> SQLiteDirectConnection {
        switch try state.withLock({ state throws(DatabaseShutDownError) in try state.lend(capacity: capacity) }) {
        case .idle(let connection): return connection
        case .slot: return try openInReservedSlot()
        case .exhausted: break
        }
        let id = nextWaiterID.wrappingAdd(1, ordering: .relaxed).newValue
        let handed = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SQLiteDirectConnection?, any Error>) in
                let lent = state.withLock { state -> Result<Lent, any Error> in
                    Result {
                        try Task.checkCancellation()
                        let lent = try state.lend(capacity: capacity)
                        if case .exhausted = lent { state.waiters.append(Waiter(id: id, continuation: continuation)) }
                        return lent
                    }
                }
                switch lent {
                case .success(.idle(let connection)): continuation.resume(returning: connection)
                case .success(.slot): continuation.resume(returning: nil)
                case .success(.exhausted): break
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) } }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        return try handed ?? openInReservedSlot()
    }

    /// Opens a connection in a slot this caller reserved; if that fails the slot passes to the first waiter (which
    /// tries in turn) or is freed.
    private func openInReservedSlot() throws -> SQLiteDirectConnection {
        do {
            return try setup.open(logger: logger, eventLoop: eventLoopGroup.any())
        } catch {
            let waiter = state.withLock { state -> Waiter? in
                guard !state.waiters.isEmpty else {
                    state.opened -= 1
                    return nil
                }
                return state.waiters.removeFirst()
            }
            waiter?.continuation.resume(returning: nil)
            throw error
        }
    }

    private func release(_ connection: SQLiteDirectConnection) {
        connection.rollBackLeftoverTransaction()
        let returned = state.withLock { state -> Returned in
            if state.isShutDown {
                state.opened -= 1
                return .closed
            }
            guard !state.waiters.isEmpty else {
                state.idle.append(connection)
                return .idle
            }
            return .handed(state.waiters.removeFirst())
        }
        switch returned {
        case .idle: break
        case .closed: connection.close()
        case .handed(let waiter): waiter.continuation.resume(returning: connection)
        }
    }
}

extension SQLiteConnectionPool {
    private struct State {
        /// Connections not lent; the most recently returned (its caches warmest) is lent first.
        var idle: [SQLiteDirectConnection] = []
        /// Connections open or being opened, lent or idle.
        var opened = 0
        /// Callers waiting for a connection, first come first served; `nil` hands over a slot to open one in.
        var waiters: [Waiter] = []
        var isShutDown = false

        mutating func lend(capacity: Int) throws(DatabaseShutDownError) -> Lent {
            guard !isShutDown else { throw DatabaseShutDownError() }
            if let connection = idle.popLast() { return .idle(connection) }
            guard opened < capacity else { return .exhausted }
            opened += 1
            return .slot
        }
    }

    private enum Lent {
        case idle(SQLiteDirectConnection)
        /// A free slot, now reserved for the caller to open a connection in.
        case slot
        /// Every connection is lent.
        case exhausted
    }

    private enum Returned {
        case idle
        case closed
        case handed(Waiter)
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<SQLiteDirectConnection?, any Error>
    }
}

/// The database was asked for a connection after ``Database/shutdown()``.
struct DatabaseShutDownError: Error, CustomStringConvertible {
    var description: String {
        "the database has been shut down"
    }
}

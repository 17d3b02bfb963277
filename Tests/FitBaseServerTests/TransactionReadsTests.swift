import FitBaseTestSupport
import Foundation
import NIOCore
import NIOPosix
import SQLKit
import Synchronization
import Testing

@testable import FitBaseServer

/// Reads made inside a SQLite write transaction's body (``OpenWriteTransaction``).
@Suite struct TransactionReadsTests {
    /// True for the first caller only.
    final class FirstBody: Sendable {
        private let pending = Atomic(true)
        func take() -> Bool { pending.exchange(false, ordering: .relaxed) }
    }

    /// A body that reads through `withConnection` reads on its own transaction's connection: it sees its own writes, and
    /// never waits for a pooled connection. Here the pool has one connection and half the callers hold it while they
    /// wait at the write gate: a body holding the gate that asked the pool would wait forever.
    @Test(.timeLimit(.minutes(1))) func aBodyReadsOnItsOwnConnectionAndNeverWaitsForThePool() async throws {
        try await TestDatabase.with(.sqlite) { testDatabase in
            let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let database = try await Database.open(
                testDatabase.location, maxConnectionsPerEventLoop: 1, eventLoopGroup: loop, checkpointsInBackground: false, logger: TestDatabase.logger
            )
            try await database.transaction { db in try await db.raw("CREATE TABLE transaction_reads (n INTEGER NOT NULL)").run() }
            let count = 40
            let first = FirstBody()
            let seen = try await withThrowingTaskGroup(of: Int.self) { tasks in
                for n in 0..<count {
                    tasks.addTask {
                        if n.isMultiple(of: 2) {
                            // Holds the pool's one connection across its transaction.
                            return try await database.withConnection { _ in
                                try await database.transaction { db in
                                    try await db.raw("INSERT INTO transaction_reads (n) VALUES (\(bind: n))").run()
                                    return 1
                                }
                            }
                        }
                        return try await database.transaction { db in
                            if first.take() {
                                while database.writersWaiting < 10 { await Task.yield() }
                            }
                            try await db.raw("INSERT INTO transaction_reads (n) VALUES (\(bind: n))").run()
                            // Read through the pool's entry point: answered on this transaction's connection.
                            return try await database.withConnection { reader in
                                try await reader.raw("SELECT COUNT(*) AS c FROM transaction_reads WHERE n = \(bind: n)").first()?.decode(column: "c", as: Int.self) ?? 0
                            }
                        }
                    }
                }
                return try await tasks.reduce(0, +)
            }
            #expect(seen == count)
            try await database.shutdown()
            try await loop.shutdownGracefully()
        }
    }
}

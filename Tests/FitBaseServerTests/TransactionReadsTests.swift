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
    /// Steps two tasks wait for each other through (a waiter is resumed once, when its step is reached).
    final class Steps: Sendable {
        private let state = Mutex<(reached: Set<String>, waiting: [String: [CheckedContinuation<Void, Never>]])>(([], [:]))

        func reach(_ step: String) {
            let waiting = state.withLock { state in
                state.reached.insert(step)
                return state.waiting.removeValue(forKey: step) ?? []
            }
            for waiter in waiting { waiter.resume() }
        }

        func wait(for step: String) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let reached = state.withLock { state in
                    if !state.reached.contains(step) { state.waiting[step, default: []].append(continuation) }
                    return state.reached.contains(step)
                }
                if reached { continuation.resume() }
            }
        }
    }

    /// A body that reads through `withConnection` reads on its own transaction's connection: it sees its own writes, and
    /// never waits for a pooled connection. The pool has one connection; a caller holds it while it waits at the write
    /// gate, behind a body that then reads: had that read asked the pool, neither would ever move.
    // Without the fix this never ends; the limit is generous because a full test run on 2 cores takes seconds per
    // scheduling turn.
    @Test(.timeLimit(.minutes(5))) func aBodyReadsOnItsOwnConnectionAndNeverWaitsForThePool() async throws {
        try await TestDatabase.with(.sqlite) { testDatabase in
            let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let database = try await Database.open(
                testDatabase.location, maxConnectionsPerEventLoop: 1, eventLoopGroup: loop, checkpointsInBackground: false, logger: TestDatabase.logger
            )
            try await database.transaction { db in try await db.raw("CREATE TABLE transaction_reads (n INTEGER NOT NULL)").run() }
            let steps = Steps()
            async let holder: Void = database.withConnection { _ in
                steps.reach("pool connection held")
                await steps.wait(for: "gate held")
                try await database.transaction { db in try await db.raw("INSERT INTO transaction_reads (n) VALUES (1)").run() }
            }
            await steps.wait(for: "pool connection held")
            let seen = try await database.transaction { db in
                steps.reach("gate held")
                while database.writersWaiting == 0 { await Task.yield() }  // the holder waits behind this body now
                try await db.raw("INSERT INTO transaction_reads (n) VALUES (2)").run()
                return try await database.withConnection { reader in
                    try await reader.raw("SELECT COUNT(*) AS c FROM transaction_reads WHERE n = 2").first()?.decode(column: "c", as: Int.self)
                }
            }
            try await holder
            #expect(seen == 1)
            let stored = try await database.withConnection { db in
                try await db.raw("SELECT COUNT(*) AS c FROM transaction_reads").first()?.decode(column: "c", as: Int.self)
            }
            #expect(stored == 2)
            try await database.shutdown()
            try await loop.shutdownGracefully()
        }
    }
}

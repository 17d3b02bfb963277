import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
import Synchronization

/// Copies the write-ahead log back into the SQLite database file in the background, so commits do not.
///
/// By default the commit that takes the log past 1,000 pages runs the checkpoint: it copies every page written since
/// the last one into the database file and syncs both files, while every write queued behind it waits. Bulk writes
/// paid this on every commit (a 1,000-sample health upload dirties ~1,100 pages): two `fsync`s of ~20 ms each per
/// upload, more than the upload's own work. Here a connection of its own, on a thread of its own, checkpoints
/// `PASSIVE` (never waiting for the writer) shortly after writes, and the write connection only checkpoints as a
/// backstop, should this one fall far behind (``SQLiteConnectionSetup/writerBackstopPages``).
///
/// A log only starts again from its beginning when a write begins with every frame already copied. Under steady
/// writes a background copy never quite catches up, so once the log is past ``restartPages`` and the last pass left
/// a short tail, the tail is copied holding the ``WriteGate``: writes wait for that short copy, and the next one
/// starts the log again. A tail that stays long (the writer outpacing the copies) is taken after a few passes anyway,
/// which bounds the log.
final class SQLiteCheckpointer: Sendable {
    /// What a pass found: the log's length in frames and how many of them are in the database file.
    struct Pass: Sendable, Equatable {
        var logFrames: Int
        var copiedFrames: Int
    }

    /// Log length (pages) past which the log is made to start again: 128 MiB of 4 KiB pages. Each restart holds writes
    /// for one short copy; at 8,192 pages, bulk health uploads ran 5 % slower.
    static let restartPages = 32_768
    /// The longest tail (pages written during the last pass) copied while writes wait.
    static let tailPages = 2_048
    /// Passes with a longer tail before the tail is taken anyway.
    static let maximumDeferrals = 4

    private let setup: SQLiteConnectionSetup
    private let eventLoop: any EventLoop
    /// Opened by the first pass, once the database is in WAL mode.
    private let connection = Mutex<SQLiteDirectConnection?>(nil)
    private let gate: WriteGate
    private let logger: Logger
    private let loop = Mutex<Task<Void, Never>?>(nil)

    /// The thread every checkpointer copies and syncs on: checkpoints block on `fsync`, never a concurrency thread.
    private static let thread: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()

    init(setup: SQLiteConnectionSetup, gate: WriteGate, eventLoop: any EventLoop, logger: Logger) {
        self.setup = setup
        self.eventLoop = eventLoop
        self.gate = gate
        self.logger = logger
    }

    /// Starts the background passes (until ``stop()``).
    func start() {
        let task = Task.detached(priority: .utility) { [self] in await self.run() }
        loop.withLock { $0 = task }
    }

    /// Ends the background passes and closes the connection.
    func stop() async {
        let task = loop.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        connection.withLock { connection in
            connection?.close()
            connection = nil
        }
    }

    /// One `PASSIVE` checkpoint; with `holdingWrites`, while no write transaction runs or starts.
    func pass(holdingWrites: Bool = false) async throws -> Pass {
        let checkpoint: @Sendable () throws -> Pass = { [self] in
            let connection = try self.connection.withLock { connection throws(SQLiteReportedError) -> SQLiteDirectConnection in
                if let connection { return connection }
                let opened = try setup.open(logger: logger, eventLoop: eventLoop)
                connection = opened
                return opened
            }
            var pass = Pass(logFrames: 0, copiedFrames: 0)
            try connection.run("PRAGMA wal_checkpoint(PASSIVE)", []) { _, values in
                guard values.count == 3, let log = values[1].integer, let copied = values[2].integer else { return }
                pass = Pass(logFrames: log, copiedFrames: copied)
            }
            return pass
        }
        if holdingWrites {
            return try await gate.run { try await Self.thread.runIfActive(checkpoint) }
        }
        return try await Self.thread.runIfActive(checkpoint)
    }

    private func run() async {
        var previousLog = 0
        var deferrals = 0
        var idle = false
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .milliseconds(idle ? 250 : 25))
                let pass = try await self.pass()
                // Frames written since the previous pass began (the log may have started again in between).
                let tail = pass.logFrames >= previousLog ? pass.logFrames - previousLog : pass.logFrames
                idle = tail == 0
                previousLog = pass.logFrames
                guard pass.logFrames >= Self.restartPages, tail > 0 else { continue }
                if tail <= Self.tailPages || deferrals >= Self.maximumDeferrals {
                    _ = try await self.pass(holdingWrites: true)
                    deferrals = 0
                } else {
                    deferrals += 1
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("background checkpoint failed", metadata: ["error": "\(String(reflecting: error))"])
                idle = true
            }
        }
    }
}

import NIOCore

/// Runs a task's jobs on one event loop: a database body on the loop of the connection it was given
/// (``Database/withConnection(_:)`` on PostgreSQL).
///
/// Without it the body runs on Swift's global executor while its connection lives on an event loop, so every
/// statement's answer crosses threads twice (loop to pool and back), a wake-up each way; on the connection's loop its
/// statements are written and their answers read without leaving the thread. A request that reads no database (a
/// catalog page from memory, `/healthz`) never moves.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        eventLoop.execute { job.runSynchronously(on: executor) }
    }
}

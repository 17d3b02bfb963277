import Hummingbird
import NIOCore

/// Runs a task's jobs on one event loop: a request's handler on the loop of the connection it came on.
///
/// Without it a request's task runs on Swift's global executor while its socket and its database connections live on
/// event loops, so every statement's answer crosses threads twice (loop to pool and back), a wake-up each way. On the
/// connection's loop, the database pool leases a connection of the same loop (``Database``), and a request's
/// statements and its answer are written and read without leaving the thread. Work that must not hold a loop
/// (password hashing, image decoding) already runs on thread pools of its own.
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

/// Handles each request on its connection's event loop (``EventLoopTaskExecutor``); outermost, so every middleware and
/// handler after it runs there. On PostgreSQL only: a request's statements each save two thread crossings, which pays
/// for the two its task makes to get to the loop and back; SQLite's statements run on the calling thread anyway. A
/// route that reads no database (`/healthz`, asked constantly by load balancers) stays where it is.
struct EventLoopAffinityMiddleware: RouterMiddleware {
    typealias Context = FitBaseRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path != "/healthz", let eventLoop = context.channel?.eventLoop else { return try await next(request, context) }
        return try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) { try await next(request, context) }
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit
import ServiceLifecycle
import Synchronization

/// `GET /v1/events`: Server-Sent Events of the caller's topics — their group's leaderboards and their notifications.
///
/// Every event carries its durable id; a client reconnecting with `Last-Event-ID` (or `?lastEventId=`) first receives
/// every event after it that is still kept (48 hours) and that it may see: its group's only from when the user joined
/// it. Then the ``EventHub`` hands it new events as they commit on any instance. The stream ends with its session
/// (sign-out, revocation, a reused refresh token, account deletion) and when its access token expires; the client
/// reconnects with a fresh token and resumes from the last id it received.
struct EventStreamController: Sendable {
    let database: Database
    let hub: EventHub

    func streamEvents(_ input: Operations.StreamEvents.Input) async throws -> Operations.StreamEvents.Output {
        let caller = try RequestScope.requireCaller()
        let requested = input.headers.lastEventID ?? input.query.lastEventId
        let resumeFrom: Int64
        if let requested {
            guard let id = Int64(requested.trimmingCharacters(in: .whitespaces)), id >= 0 else {
                throw Problem.invalidRequest("Last-Event-ID is not an event id.", fieldErrors: [.init(field: "Last-Event-ID", message: "must be an event id")])
            }
            resumeFrom = id
        } else {
            resumeFrom = try await database.withConnection { db in try await EventLog.latestID(on: db) }
        }
        let (body, output) = AsyncStream<ArraySlice<UInt8>>.makeStream()
        let subscriber = EventSubscriber(user: caller.user, session: caller.session, expiresAt: caller.expiresAt, resumingAfter: resumeFrom, output: output)
        guard hub.register(subscriber) else {
            throw Problem(
                .serviceUnavailable, code: .busy, detail: "This server holds as many event streams as it may; try again shortly.",
                headers: [.retryAfter: "5"]
            )
        }
        let (database, hub) = (self.database, self.hub)
        // The request runs in the server's service tree, whose graceful shutdown this task inherits: on SIGTERM the
        // stream ends, so the server can drain instead of waiting for clients to hang up.
        let catchUp = Task {
            await withGracefulShutdownHandler {
                do {
                    try await subscriber.catchUp(database: database, hub: hub)
                } catch {
                    subscriber.close()
                    return
                }
                // Live from here: wait for the end, so a shutdown still closes the stream.
                while !Task.isCancelled, (try? await Task.sleep(for: .seconds(3600))) != nil {}
            } onGracefulShutdown: {
                subscriber.close()
            }
        }
        output.onTermination = { _ in
            catchUp.cancel()
            hub.unregister(subscriber)
            subscriber.close()
        }
        return .ok(.init(
            headers: .init(cacheControl: "no-cache"),
            body: .textEventStream(HTTPBody(body, length: .unknown, iterationBehavior: .single))
        ))
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
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
protocol EventStreamOperations: FeatureOperations { var realtimeFeature: RealtimeFeature { get } }

extension EventStreamOperations {
    private var database: Database { realtimeFeature.database }
    private var hub: EventHub { realtimeFeature.hub }

    /// The generated handler's answer (kept for when direct routes are off): the same stream as ``eventRoutes`` serves,
    /// caught up by a task of its own.
    func streamEvents(_ input: Operations.StreamEvents.Input) async throws -> Operations.StreamEvents.Output {
        let (subscriber, bytes) = try await open(lastEventID: input.headers.lastEventID ?? input.query.lastEventId)
        let (database, hub) = (self.database, self.hub)
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
        subscriber.onEnd { catchUp.cancel() }
        return .ok(.init(
            headers: .init(cacheControl: "no-cache"),
            body: .textEventStream(HTTPBody(bytes.map { ArraySlice($0.readableBytesView) }, length: .unknown, iterationBehavior: .single))
        ))
    }

    /// `GET /v1/events` answered without the generated server: the stream's bytes are written by the connection's own
    /// task, which also catches up and hears the server's graceful shutdown, so an open stream holds no task of its own.
    var eventRoutes: [DirectRoute] {
        [
            DirectRoute(method: .get, path: "/v1/events") { request, _ in
                let requested = request.headers[.lastEventID] ?? request.uri.queryParameters["lastEventId"].map(String.init)
                let (subscriber, bytes) = try await open(lastEventID: requested)
                let (database, hub) = (self.database, self.hub)
                return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: ResponseBody { writer in
                    defer { subscriber.close() }
                    try await withGracefulShutdownHandler {
                        do {
                            try await subscriber.catchUp(database: database, hub: hub)
                        } catch {
                            return
                        }
                        for await chunk in bytes { try await writer.write(chunk) }
                    } onGracefulShutdown: {
                        subscriber.close()
                    }
                    try await writer.finish(nil)
                })
            }
        ]
    }

    /// Checks `Last-Event-ID` and registers the caller's stream with the hub: its subscriber and the bytes it writes.
    func open(lastEventID requested: String?) async throws -> (EventSubscriber, AsyncStream<ByteBuffer>) {
        let caller = try RequestScope.requireCaller()
        let resumeFrom: Int64
        if let requested {
            guard let id = Int64(requested.trimmingCharacters(in: .whitespaces)), id >= 0 else {
                throw Problem.invalidRequest("Last-Event-ID is not an event id.", fieldErrors: [.init(field: "Last-Event-ID", message: "must be an event id")])
            }
            // An id past the log's end would have the stream skip what comes next, until the ids caught up with it.
            let latest = try await database.withConnection { db in try await EventLog.latestID(on: db) }
            guard id <= latest else {
                throw Problem.invalidRequest(
                    "Last-Event-ID names an event that does not exist yet.", fieldErrors: [.init(field: "Last-Event-ID", message: "is past the newest event")]
                )
            }
            resumeFrom = id
        } else {
            resumeFrom = try await database.withConnection { db in try await EventLog.latestID(on: db) }
        }
        let (bytes, output) = AsyncStream<ByteBuffer>.makeStream()
        let subscriber = EventSubscriber(user: caller.user, session: caller.session, expiresAt: caller.expiresAt, resumingAfter: resumeFrom, output: output)
        guard hub.register(subscriber) else {
            throw Problem(
                .serviceUnavailable, code: .busy, detail: "This server holds as many event streams as it may; try again shortly.",
                headers: [.retryAfter: "5"]
            )
        }
        let hub = self.hub
        output.onTermination = { _ in
            hub.unregister(subscriber)
            subscriber.close()
        }
        return (subscriber, bytes)
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}

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
/// every event after it that is still kept (48 hours). Topics are re-read on every wake-up, so joining or leaving a
/// group takes effect at once and a non-member never sees a group's events. Wake-ups come from the ``EventHub`` only:
/// after a transaction that wrote events commits on this instance, or on another one (``EventListenerService``). At
/// rest a stream reads nothing; a comment line every 15 seconds keeps proxies from closing it.
struct EventStreamController: Sendable {
    let database: Database
    let hub: EventHub
    var heartbeat: Duration = .seconds(15)

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
        let (body, continuation) = AsyncStream<ArraySlice<UInt8>>.makeStream()
        let (signals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Closed by the hub when the caller opens more streams than an account may: the stream just ends.
        guard let registration = hub.register(wake, of: caller.user, close: { wake.finish() }) else {
            throw Problem(
                .serviceUnavailable, code: .busy, detail: "This server holds as many event streams as it may; try again shortly.",
                headers: [.retryAfter: "5"]
            )
        }
        wake.yield()  // the first read replays what came after Last-Event-ID
        let (database, hub, heartbeat, user) = (self.database, self.hub, self.heartbeat, caller.user)
        let lastWrite = LastWrite()
        // Keep-alives are written without reading anything.
        let ticker = Task {
            while !Task.isCancelled {
                guard (try? await Task.sleep(for: heartbeat)) != nil else { return }
                if lastWrite.isOlder(than: heartbeat) {
                    continuation.yield(ArraySlice(": keep-alive\n\n".utf8))
                    lastWrite.touch()
                }
            }
        }
        // The request runs in the server's service tree, whose graceful shutdown this task inherits: on SIGTERM the
        // wake-ups end, so the stream ends and the server can drain instead of waiting for clients to hang up.
        let producer = Task {
            await withGracefulShutdownHandler {
                await Self.stream(from: resumeFrom, of: user, signals: signals, into: continuation, database: database, lastWrite: lastWrite)
            } onGracefulShutdown: {
                wake.finish()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            producer.cancel()
            ticker.cancel()
            hub.unregister(registration)
            wake.finish()
        }
        return .ok(.init(
            headers: .init(cacheControl: "no-cache"),
            body: .textEventStream(HTTPBody(body, length: .unknown, iterationBehavior: .single))
        ))
    }

    /// Writes events after `resumeFrom` to `continuation` on every wake-up, until the wake-ups end or a read fails.
    private static func stream(
        from resumeFrom: Int64, of user: UserID, signals: AsyncStream<Void>, into continuation: AsyncStream<ArraySlice<UInt8>>.Continuation,
        database: Database, lastWrite: LastWrite
    ) async {
        var last = resumeFrom
        continuation.yield(ArraySlice("retry: 3000\n\n".utf8))
        for await _ in signals {
            guard !Task.isCancelled else { break }
            do {
                var sent = 0
                repeat {
                    let from = last
                    let events = try await database.withConnection { db in
                        try await EventLog.events(after: from, for: try await Self.subscriptions(of: user, on: db), limit: 200, on: db)
                    }
                    for event in events {
                        continuation.yield(ArraySlice("id: \(event.id)\nevent: \(event.type)\ndata: \(event.data)\n\n".utf8))
                        last = event.id
                    }
                    sent = events.count
                    if sent > 0 { lastWrite.touch() }
                } while sent == 200
            } catch {
                return
            }
        }
    }

    /// What the caller may read now: their own topic, and their group's leaderboards from when they joined it (none
    /// after they leave or are removed, and nothing from before a re-join).
    static func subscriptions(of user: UserID, on db: any SQLDatabase) async throws -> [EventSubscription] {
        var subscriptions = [EventSubscription(topic: .user(user), since: nil)]
        if let membership = try await GroupStore.membership(of: user, on: db) {
            subscriptions.append(EventSubscription(topic: .group(membership.group), since: membership.joinedAt))
        }
        return subscriptions
    }
}

/// When a stream last wrote, shared by its writer and its keep-alive timer.
private final class LastWrite: Sendable {
    private let instant = Mutex(ContinuousClock.now)

    func touch() {
        instant.withLock { $0 = .now }
    }

    func isOlder(than interval: Duration) -> Bool {
        instant.withLock { ContinuousClock.now - $0 >= interval }
    }
}

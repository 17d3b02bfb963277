import FitBaseAPI
import FitBaseCore
import Foundation
import OpenAPIRuntime

/// A weekly challenge's leaderboard: workouts this week, or the streak of consecutive days.
public typealias LeaderboardType = ChallengeKind

/// Something the server announced on the signed-in user's event stream.
public struct FitBaseEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// A leaderboard of the user's group changed.
        case leaderboard(challengeID: ChallengeID, type: LeaderboardType)
        /// A notification for the user.
        case notification(id: NotificationID, type: NotificationKind, message: String)
        /// A week of the user's group ended.
        case weekEnded(weekStart: String)
        /// The user's data changed on another device: pull from the sync cursor.
        case sync(cursor: String)
        /// The user's entitlement changed (a purchase on another device, a store's notification, a grant), to this tier
        /// and status: refresh ``Entitlements``.
        case subscription(tier: SubscriptionTier, status: EntitlementStatus)
        /// An event this SDK version does not know, or one whose data it cannot read.
        case other(name: String)
    }

    /// The durable id (what `Last-Event-ID` resumes from).
    public var id: String
    public var kind: Kind
    /// The event's JSON.
    public var data: String
}

/// A leaderboard as the server ranks it: the challenge, its entries best first, and the signed-in user's entry.
public typealias LeaderboardSnapshot = Components.Schemas.Leaderboard

/// A stream of values from the server that ends by throwing a ``FitBaseError`` when it cannot go on: iterate it with
/// `for try await` and catch `FitBaseError` (`.notSignedIn` once the session has ended, `.problem` for a refusal).
public struct FitBaseStream<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = FitBaseError
    let base: AsyncThrowingStream<Element, any Error>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.AsyncIterator

        public mutating func next() async throws(FitBaseError) -> Element? {
            do {
                return try await base.next()
            } catch {
                throw FitBaseError(thrownByCall: error)
            }
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(FitBaseError) -> Element? {
            do {
                return try await base.next(isolation: actor)
            } catch {
                throw FitBaseError(thrownByCall: error)
            }
        }
    }
}

extension FitBaseClient {
    /// The signed-in user's events — their group's leaderboard changes, their notifications, sync nudges, changes of
    /// their entitlement — as they happen.
    ///
    /// Resumes with `Last-Event-ID` whenever it connects again, so nothing is lost while the connection was down (the
    /// server keeps 48 hours). The server ends a stream when its access token expires: the stream then connects again at
    /// once, and the expired token is refreshed on the way. A lost connection, a busy server (503) or a server error is
    /// retried after 1, 2, 4 … up to 30 seconds. It ends by throwing when it cannot go on: `.notSignedIn` or the refresh
    /// problem once the session has ended (signed out, revoked, deleted), another problem when the server refuses it.
    /// Iterating stops when the consumer stops.
    public func events(resumingAfter lastEventID: String? = nil) -> FitBaseStream<FitBaseEvent> {
        let (stream, continuation) = AsyncThrowingStream<FitBaseEvent, any Error>.makeStream()
        let task = Task {
            var last = lastEventID
            var backoff = 1.0
            while !Task.isCancelled {
                var delay = backoff
                do {
                    let ok = try await api.streamEvents(headers: .init(lastEventID: last)).ok
                    guard case .textEventStream(let body) = ok.body else { throw FitBaseError.unexpectedResponse(statusCode: 200) }
                    let opened = ContinuousClock.now
                    for try await event in body.asDecodedServerSentEvents() {
                        guard let id = event.id else { continue }
                        last = id
                        continuation.yield(Self.event(id: id, name: event.event ?? "message", data: event.data ?? ""))
                    }
                    // The server closed it (its token expired, or it is shutting down): again at once, unless it
                    // closes as soon as it opens.
                    delay = ContinuousClock.now - opened > .seconds(5) ? 0 : backoff
                    backoff = ContinuousClock.now - opened > .seconds(5) ? 1 : min(backoff * 2, 30)
                } catch {
                    if Task.isCancelled { break }
                    let failure = FitBaseError(thrownByCall: error)
                    switch failure.statusCode {
                    case nil:
                        // The connection failed: again, later each time. Signed out: the stream is over.
                        guard case .transport = failure else {
                            continuation.finish(throwing: failure)
                            return
                        }
                        backoff = min(backoff * 2, 30)
                    case 429:
                        // Rate-limited: again once the server says a request will be let through.
                        if case .problem(let problem) = failure { delay = max(delay, Double(problem.retryAfterSeconds ?? 1)) }
                    case let status? where status >= 500:
                        backoff = min(backoff * 2, 30)
                    default:
                        continuation.finish(throwing: failure)
                        return
                    }
                }
                if delay > 0 { try? await Task.sleep(for: .seconds(delay)) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return FitBaseStream(base: stream)
    }

    /// The group's leaderboard of `type`: the current board at once, then a fresh one each time it changes (as the
    /// seed's `observeLeaderboard`). Ends by throwing as ``events(resumingAfter:)`` does, or when a board cannot be
    /// read (`.problem` with `notFound` once the user is no longer in the group).
    public func observeLeaderboard(groupId: GroupID, type: LeaderboardType) -> FitBaseStream<LeaderboardSnapshot> {
        let (stream, continuation) = AsyncThrowingStream<LeaderboardSnapshot, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            do {
                // Subscribe first, so a change between the first fetch and the subscription is not missed.
                let events = self.events()
                continuation.yield(try await leaderboard(groupId: groupId, type: type))
                for try await event in events {
                    guard case .leaderboard(_, let changed) = event.kind, changed == type else { continue }
                    continuation.yield(try await leaderboard(groupId: groupId, type: type))
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return FitBaseStream(base: stream)
    }

    /// The group's current leaderboard of `type`.
    public func leaderboard(groupId: GroupID, type: LeaderboardType) async throws(FitBaseError) -> LeaderboardSnapshot {
        try await call { try await self.api.getLeaderboard(path: .init(groupId: groupId.description, _type: type)).ok.body.json }
    }

    static func event(id: String, name: String, data: String) -> FitBaseEvent {
        let json = (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
        let kind: FitBaseEvent.Kind = switch name {
        case "leaderboard":
            if let type = (json["type"] as? String).flatMap(LeaderboardType.init(rawValue:)),
                let challenge = (json["challengeId"] as? String).flatMap(ChallengeID.init)
            {
                .leaderboard(challengeID: challenge, type: type)
            } else {
                .other(name: name)
            }
        case "notification":
            if let id = (json["id"] as? String).flatMap(NotificationID.init), let type = (json["type"] as? String).flatMap(NotificationKind.init(rawValue:)),
                let message = json["message"] as? String
            {
                .notification(id: id, type: type, message: message)
            } else {
                .other(name: name)
            }
        case "week_ended": .weekEnded(weekStart: json["weekStart"] as? String ?? "")
        case "sync": .sync(cursor: json["cursor"] as? String ?? "")
        case "subscription":
            if let tier = (json["tier"] as? String).flatMap(SubscriptionTier.init(rawValue:)),
                let status = (json["status"] as? String).flatMap(EntitlementStatus.init(rawValue:))
            {
                .subscription(tier: tier, status: status)
            } else {
                .other(name: name)
            }
        default: .other(name: name)
        }
        return FitBaseEvent(id: id, kind: kind, data: data)
    }
}

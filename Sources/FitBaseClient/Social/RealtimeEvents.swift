import FitBaseAPI
import Foundation
import OpenAPIRuntime

/// Something the server announced on the signed-in user's event stream.
public struct FitBaseEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// A leaderboard of the user's group changed (`checkIns` or `streak`).
        case leaderboard(challengeID: String, type: String)
        /// A notification for the user (`new_member`, `rank_change`, `week_ended`).
        case notification(id: String, type: String, message: String)
        /// A week of the user's group ended.
        case weekEnded(weekStart: String)
        /// An event this SDK version does not know.
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

extension FitBaseClient {
    /// The signed-in user's events — their group's leaderboard changes and their notifications — as they happen.
    ///
    /// Reconnects by itself (after 1, 2, 4 … up to 30 seconds) and resumes with `Last-Event-ID`, so nothing is lost
    /// while the connection was down (the server keeps 48 hours). Ends when the consumer stops iterating.
    public func events(resumingAfter lastEventID: String? = nil) -> AsyncStream<FitBaseEvent> {
        let (stream, continuation) = AsyncStream<FitBaseEvent>.makeStream()
        let task = Task {
            var last = lastEventID
            var backoff = 1.0
            while !Task.isCancelled {
                do {
                    let output = try await api.streamEvents(headers: .init(lastEventID: last))
                    guard case .ok(let ok) = output, case .textEventStream(let body) = ok.body else { throw FitBaseError.from(statusCode: 0, problem: nil) }
                    backoff = 1
                    for try await event in body.asDecodedServerSentEvents() {
                        guard let id = event.id else { continue }
                        last = id
                        continuation.yield(Self.event(id: id, name: event.event ?? "message", data: event.data ?? ""))
                    }
                } catch {
                    if Task.isCancelled { break }
                }
                try? await Task.sleep(for: .seconds(backoff))
                backoff = min(backoff * 2, 30)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The group's leaderboard of `type` (`checkIns` or `streak`): the current board at once, then a fresh one each
    /// time it changes (as the seed's `observeLeaderboard`).
    public func observeLeaderboard(groupId: String, type: String) -> AsyncStream<LeaderboardSnapshot> {
        let (stream, continuation) = AsyncStream<LeaderboardSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            // Subscribe first, so a change between the first fetch and the subscription is not missed.
            let events = self.events()
            if let board = try? await leaderboard(groupId: groupId, type: type) { continuation.yield(board) }
            for await event in events {
                guard case .leaderboard(_, let changed) = event.kind, changed == type else { continue }
                if let board = try? await leaderboard(groupId: groupId, type: type) { continuation.yield(board) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The group's current leaderboard of `type`.
    public func leaderboard(groupId: String, type: String) async throws(FitBaseError) -> LeaderboardSnapshot {
        guard let kind = Operations.GetLeaderboard.Input.Path._TypePayload(rawValue: type) else {
            throw .from(statusCode: 400, problem: nil)
        }
        switch try await call({ try await self.api.getLeaderboard(path: .init(groupId: groupId, _type: kind)) }) {
        case .ok(let ok): return try FitBaseError.decoding { try ok.body.json }
        case .unauthorized(let response): throw .from(statusCode: 401, problem: try? response.body.applicationProblemJson)
        case .notFound(let response): throw .from(statusCode: 404, problem: try? response.body.applicationProblemJson)
        case .default(let code, let response): throw .from(statusCode: code, problem: try? response.body.applicationProblemJson)
        }
    }

    static func event(id: String, name: String, data: String) -> FitBaseEvent {
        let json = (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
        let kind: FitBaseEvent.Kind = switch name {
        case "leaderboard": .leaderboard(challengeID: json["challengeId"] as? String ?? "", type: json["type"] as? String ?? "")
        case "notification": .notification(id: json["id"] as? String ?? "", type: json["type"] as? String ?? "", message: json["message"] as? String ?? "")
        case "week_ended": .weekEnded(weekStart: json["weekStart"] as? String ?? "")
        default: .other(name: name)
        }
        return FitBaseEvent(id: id, kind: kind, data: data)
    }
}

import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import Synchronization

/// `GET /v1/workouts/{workoutId}` and `GET /v1/workouts` answered from workouts encoded once per catalog generation.
///
/// Encoding the wire form of twenty workouts with `JSONEncoder` was half the CPU of a catalog listing. Here each
/// workout of a ``CatalogCache/Snapshot`` is encoded once (and once more without its video for premium workouts,
/// as callers without the entitlement see it), with the encoder settings of the generated server, so the bytes are
/// those the generated handler would send; a page is the encoded workouts joined. The same snapshot, the same
/// access rule (``PremiumContentAccess``) and the same listing rules (``CatalogCache/Snapshot/pagePositions``) decide
/// what is sent.
///
/// The fast path takes only requests it understands completely: valid ids, and listings whose parameters are all
/// known, valid and need no decoding. Anything else — an unknown workout, a bad value, a text search — returns `nil`
/// and the generated handler answers it, with its problems and field names (``DirectRoute``).
final class CatalogResponses: Sendable {
    /// A workout's wire form as JSON: as everyone sees it, and (premium workouts only) without the video; and the
    /// entity tag of the first as an answer of its own (``ConditionalGetMiddleware/entityTag(_:)``).
    struct EncodedWorkout: Sendable {
        let open: ByteBuffer
        let locked: ByteBuffer?
        let openTag: String
    }

    private let store: CatalogStore
    private let premiumAccess: any PremiumContentAccess
    /// The encoded workouts of the newest generation seen, or the one encoding of it under way (one at a time, shared
    /// by every request that needs it, so a catalog edit costs one encoding however many requests follow it).
    private let encoded = Mutex<(generation: Int64, workouts: Task<[EncodedWorkout], Never>)?>(nil)
    /// The newest encoding finished, for answers that cannot wait for one (``answerAtHand(path:)``).
    private let finished = Mutex<(generation: Int64, workouts: [EncodedWorkout])?>(nil)

    init(store: CatalogStore, premiumAccess: any PremiumContentAccess) {
        self.store = store
        self.premiumAccess = premiumAccess
    }

    /// The routes this answers, for ``RoutingTransport``.
    var routes: [DirectRoute] {
        [
            DirectRoute(method: .get, path: "/v1/workouts/{workoutId}") { request, context in try await self.workout(request, context: context) },
            DirectRoute(method: .get, path: "/v1/workouts") { request, _ in try await self.page(request) },
        ]
    }

    // MARK: Routes

    private func workout(_ request: Request, context: FitBaseRequestContext) async throws -> Response? {
        guard DirectRoute.acceptsJSON(request), let raw = context.parameters.get("workoutId"), let id = WorkoutID(raw) else { return nil }
        let snapshot = try await store.cache.snapshot()
        guard let position = snapshot.index[id] else { return nil }
        let workouts = await encodedWorkouts(of: snapshot)
        let locked = snapshot.workouts[position].isPremium ? try await !premiumAccess.isEntitled(RequestScope.current.caller) : false
        return DirectRoute.json(locked ? workouts[position].locked ?? workouts[position].open : workouts[position].open)
    }

    private func page(_ request: Request) async throws -> Response? {
        guard DirectRoute.acceptsJSON(request), let listing = Listing(request.uri) else { return nil }
        let snapshot = try await store.cache.snapshot()
        let (positions, hasMore) = snapshot.pagePositions(listing.query, searched: nil, offset: listing.offset, limit: listing.limit)
        let workouts = await encodedWorkouts(of: snapshot)
        let anyPremium = positions.contains { snapshot.workouts[$0].isPremium }
        let locked = anyPremium ? try await !premiumAccess.isEntitled(RequestScope.current.caller) : false
        return DirectRoute.json(Self.page(positions, hasMore: hasMore, of: listing, workouts: workouts, locked: locked))
    }

    /// The page of `workouts` at `positions` as the generated handler would write it.
    private static func page(_ positions: [Int], hasMore: Bool, of listing: Listing, workouts: [EncodedWorkout], locked: Bool) -> ByteBuffer {
        let cursor = hasMore ? PageRequest.cursor(offset: listing.offset + listing.limit) : nil
        var body = ByteBuffer()
        body.reserveCapacity(positions.reduce(32 + (cursor?.utf8.count ?? 0)) { $0 + workouts[$1].open.readableBytes + 2 })
        body.writeStaticString(#"{"items":["#)
        for (index, position) in positions.enumerated() {
            if index > 0 { body.writeStaticString(",") }
            var item = locked ? workouts[position].locked ?? workouts[position].open : workouts[position].open
            body.writeBuffer(&item)
        }
        body.writeStaticString("]")
        if let cursor {
            // A cursor is base64url: nothing in it needs escaping.
            body.writeStaticString(#","nextCursor":""#)
            body.writeString(cursor)
            body.writeStaticString(#"""#)
        }
        body.writeStaticString("}")
        return body
    }

    // MARK: Answers at hand

    /// Which of the two routes an answer at hand is of.
    enum Route {
        case workout, page
    }

    /// The body of `GET path` (`/v1/workouts/{workoutId}` or `/v1/workouts?…`, its path and query as sent), with its
    /// entity tag when one was worked out already, for a caller without an account, when everything it needs is in
    /// memory now: the catalog's generation trusted (SQLite), its snapshot and its encoding. `nil` for anything the
    /// direct routes above would not answer themselves, for an answer with a premium workout (whether the caller sees
    /// its video is the entitlement service's to say), and when the answer would have to wait for the database or an
    /// encoding.
    func answerAtHand(path: String) -> (route: Route, body: ByteBuffer, tag: String?)? {
        let prefix = "/v1/workouts"
        guard path.utf8.starts(with: prefix.utf8), let snapshot = store.cache.snapshotAtHand() else { return nil }
        guard let workouts = finished.withLock({ $0?.generation == snapshot.generation ? $0?.workouts : nil }) else { return nil }
        let rest = path.utf8.dropFirst(prefix.utf8.count)
        if rest.first == UInt8(ascii: "/") {
            // One segment, a valid id, with nothing the router would decode.
            let raw = Substring(rest.dropFirst())
            guard !raw.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") }),
                let id = WorkoutID(String(raw)), let position = snapshot.index[id], !snapshot.workouts[position].isPremium
            else { return nil }
            return (.workout, workouts[position].open, workouts[position].openTag)
        }
        guard rest.isEmpty || rest.first == UInt8(ascii: "?"), let listing = Listing(URI(path)) else { return nil }
        let (positions, hasMore) = snapshot.pagePositions(listing.query, searched: nil, offset: listing.offset, limit: listing.limit)
        guard !positions.contains(where: { snapshot.workouts[$0].isPremium }) else { return nil }
        return (.page, Self.page(positions, hasMore: hasMore, of: listing, workouts: workouts, locked: false), nil)
    }

    // MARK: Encoding

    /// The snapshot's workouts, encoded (once per generation, by the first request that needs them).
    func encodedWorkouts(of snapshot: CatalogCache.Snapshot) async -> [EncodedWorkout] {
        let task = encoded.withLock { known -> Task<[EncodedWorkout], Never>? in
            if let known, known.generation == snapshot.generation { return known.workouts }
            // A request still holding an older snapshot than the newest seen encodes its own (rare: it overlapped an edit).
            if let known, known.generation > snapshot.generation { return nil }
            let task = Task { Self.encode(snapshot.workouts) }
            known = (snapshot.generation, task)
            return task
        }
        guard let task else { return Self.encode(snapshot.workouts) }
        let workouts = await task.value
        finished.withLock { finished in
            if finished.map({ $0.generation < snapshot.generation }) ?? true { finished = (snapshot.generation, workouts) }
        }
        return workouts
    }

    private static func encode(_ workouts: [CatalogWorkout]) -> [EncodedWorkout] {
        workouts.map { workout in
            let open = encode(CatalogWire.wire(workout, entitled: true))
            return EncodedWorkout(
                open: open, locked: workout.isPremium ? encode(CatalogWire.wire(workout, entitled: false)) : nil,
                openTag: ConditionalGetMiddleware.entityTag(open.readableBytesView)
            )
        }
    }

    private static func encode(_ workout: Components.Schemas.Workout) -> ByteBuffer {
        // A workout's wire form holds strings, numbers, booleans and arrays of them: encoding it cannot fail.
        ByteBuffer(bytes: (try? DirectRoute.encoder.encode(workout)) ?? Data("{}".utf8))
    }
}

extension CatalogResponses {
    /// The parameters of a listing the fast path takes: each known, each valid, none percent-encoded.
    struct Listing {
        var query = WorkoutQuery()
        var limit = PageRequest.defaultLimit
        var offset = 0

        init?(_ uri: URI) {
            if let raw = uri.query, raw.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return nil }
            var seen: Set<Substring> = []
            var limit: Int?
            var cursor: Substring?
            for (key, value) in uri.queryParameters {
                // Only `type` and `equipment` repeat; a repeated single value is the generated handler's to judge.
                guard key == "type" || key == "equipment" || seen.insert(key).inserted else { return nil }
                switch key {
                case "type":
                    guard let type = WorkoutType(rawValue: String(value)) else { return nil }
                    query.types.append(type)
                case "equipment":
                    guard let equipment = Equipment(rawValue: String(value)) else { return nil }
                    query.equipment = (query.equipment ?? []).union([equipment])
                case "intensity":
                    guard let intensity = Intensity(rawValue: String(value)) else { return nil }
                    query.intensity = intensity
                case "phase":
                    guard let phase = CyclePhase(rawValue: String(value)) else { return nil }
                    query.phase = phase
                case "targetArea":
                    guard let area = TargetArea(rawValue: String(value)) else { return nil }
                    query.targetArea = area
                case "minDuration":
                    guard let minutes = Int(value) else { return nil }
                    query.minDuration = minutes
                case "maxDuration":
                    guard let minutes = Int(value) else { return nil }
                    query.maxDuration = minutes
                case "featured":
                    guard let flag = Self.flag(value) else { return nil }
                    query.featured = flag
                case "premium":
                    guard let flag = Self.flag(value) else { return nil }
                    query.premium = flag
                case "sort":
                    guard let sort = WorkoutSort(rawValue: String(value)) else { return nil }
                    query.sort = sort
                case "limit":
                    guard let requested = Int(value) else { return nil }
                    limit = requested
                case "cursor":
                    cursor = value
                default:
                    // A text search (`q`) or a parameter the contract does not know.
                    return nil
                }
            }
            if let minimum = query.minDuration, let maximum = query.maxDuration, minimum > maximum { return nil }
            guard let limit = try? PageRequest.limit(limit) else { return nil }
            self.limit = limit
            if let cursor {
                guard let offset = try? PageRequest.offset(fromCursor: String(cursor)) else { return nil }
                self.offset = offset
            }
        }

        private static func flag(_ value: Substring) -> Bool? {
            switch value {
            case "true": true
            case "false": false
            default: nil
            }
        }
    }
}

import FitBaseCore
import Foundation
import Logging
import NIOCore
import SQLKit
import Synchronization

/// This instance's event streams and the one reader that feeds them all.
///
/// After a transaction that wrote events commits — here (SQLite: an after-commit hook) or on any instance (PostgreSQL:
/// ``EventListenerService`` hears its `NOTIFY`) — the hub is woken, reads the new events once, in id order, and hands
/// each to the streams of its topic: a user's streams for `user:<id>`, the members' streams for `group:<id>`. Streams
/// never read the log themselves except once, to catch up from `Last-Event-ID` when they open. At rest nothing is read.
///
/// Membership follows the log: a `membership` event moves the user's streams to their new group's topic as it is read,
/// in order with the group's own events, so a stream receives a group's events only while its user is a member. A
/// `session_ended` event closes the session's streams; a stream whose access token expires is closed too (the
/// client reconnects with a fresh token and resumes from its last event id).
///
/// Limits: at most ``Limits/perUser`` streams per account (a new one closes that account's oldest: a device that lost
/// its socket without closing it, or one account opening streams in a loop, cannot hold more) and ``Limits/total`` on
/// the instance (past that a new stream is refused: 503 `busy`).
final class EventHub: Sendable {
    /// How many streams may be open.
    struct Limits: Sendable, Equatable {
        var perUser = 5
        var total = 20_000
    }

    /// A comment line is written to a stream that wrote nothing for this long, so proxies keep it open.
    static let heartbeat: Duration = .seconds(15)

    private struct State {
        var limits = Limits()
        var subscribers: [UUID: EventSubscriber] = [:]
        /// Each user's streams, oldest first.
        var byUser: [UserID: [UUID]] = [:]
        var bySession: [SessionID: Set<UUID>] = [:]
        var byGroup: [GroupID: Set<UUID>] = [:]
        /// The group topic each stream is on (kept here, so the hub never takes a stream's lock while holding its own).
        var groupOf: [UUID: GroupID] = [:]
        /// The last event id the reader handed out; `nil` until it first reads.
        var cursor: Int64?
    }

    private let state = Mutex(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init() {
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Sets the limits for streams registered from now on.
    func limit(to limits: Limits) {
        state.withLock { $0.limits = limits }
    }

    /// The event streams open on this instance now (for `/metrics`).
    var openStreams: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Says that events were committed: the reader reads what is new (many calls before it runs make one read).
    func publish() {
        wake.yield()
    }

    // MARK: Streams

    /// Registers a stream until it closes; `false` when the instance holds as many as it may. Closes the user's oldest
    /// streams beyond their limit.
    func register(_ subscriber: EventSubscriber) -> Bool {
        let (registered, closing) = state.withLock { state -> (Bool, [EventSubscriber]) in
            var closing: [EventSubscriber] = []
            var mine = state.byUser[subscriber.user] ?? []
            while mine.count >= max(1, state.limits.perUser) {
                guard let oldest = state.subscribers.removeValue(forKey: mine.removeFirst()) else { continue }
                Self.forget(oldest, in: &state)
                closing.append(oldest)
            }
            state.byUser[subscriber.user] = mine.isEmpty ? nil : mine
            guard state.subscribers.count < state.limits.total else { return (false, closing) }
            state.subscribers[subscriber.id] = subscriber
            state.byUser[subscriber.user, default: []].append(subscriber.id)
            state.bySession[subscriber.session, default: []].insert(subscriber.id)
            return (true, closing)
        }
        for oldest in closing { oldest.close() }
        return registered
    }

    func unregister(_ subscriber: EventSubscriber) {
        state.withLock { state in
            guard state.subscribers.removeValue(forKey: subscriber.id) != nil else { return }
            let rest = (state.byUser[subscriber.user] ?? []).filter { $0 != subscriber.id }
            state.byUser[subscriber.user] = rest.isEmpty ? nil : rest
            Self.forget(subscriber, in: &state)
        }
    }

    /// Puts a stream on a group's topic (or on none).
    func regroup(_ subscriber: EventSubscriber, to group: GroupID?) {
        state.withLock { state in
            Self.ungroup(subscriber.id, in: &state)
            guard let group, state.subscribers[subscriber.id] != nil else { return }
            state.byGroup[group, default: []].insert(subscriber.id)
            state.groupOf[subscriber.id] = group
        }
    }

    /// Takes a stream off its group's and session's topics.
    private static func forget(_ subscriber: EventSubscriber, in state: inout State) {
        ungroup(subscriber.id, in: &state)
        state.bySession[subscriber.session]?.remove(subscriber.id)
        if state.bySession[subscriber.session]?.isEmpty == true { state.bySession[subscriber.session] = nil }
    }

    private static func ungroup(_ id: UUID, in state: inout State) {
        guard let group = state.groupOf.removeValue(forKey: id) else { return }
        state.byGroup[group]?.remove(id)
        if state.byGroup[group]?.isEmpty == true { state.byGroup[group] = nil }
    }

    // MARK: Reading

    /// Reads new events on every wake-up and hands them out, until cancelled; every second, writes keep-alives and
    /// closes streams whose token expired. Started once per instance (``EventListenerService``).
    func run(database: Database, logger: Logger, clock: ServerClock, sessionCheck: Duration = .seconds(30)) async {
        await withDiscardingTaskGroup { tasks in
            tasks.addTask {
                for await _ in self.wakeups {
                    do {
                        try await self.readNew(database: database)
                    } catch {
                        guard !Task.isCancelled else { return }
                        logger.warning("event hub could not read the log; trying again", metadata: ["error": "\(String(reflecting: error))"])
                        try? await Task.sleep(for: .milliseconds(500))
                        self.publish()
                    }
                }
            }
            tasks.addTask {
                while (try? await Task.sleep(for: .seconds(1))) != nil { self.tick(now: clock.now, clock: .now) }
            }
            // A stream's session is also checked in the database now and then: should the event that ended it not reach
            // this instance (its reader was behind, or the row was edited by hand), the stream still ends.
            tasks.addTask {
                while (try? await Task.sleep(for: sessionCheck)) != nil {
                    do {
                        try await self.closeStreamsOfEndedSessions(database: database)
                    } catch {
                        logger.warning("event hub could not check its streams' sessions", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
            }
        }
    }

    /// Where the reader starts: the newest event when the instance starts (streams catch up themselves before that).
    func start(after id: Int64) {
        state.withLock { if $0.cursor == nil { $0.cursor = id } }
    }

    private func readNew(database: Database) async throws {
        if state.withLock({ $0.cursor }) == nil {
            let latest = try await database.withConnection { db in try await EventLog.latestID(on: db) }
            start(after: latest)
        }
        while true {
            let cursor = state.withLock { $0.cursor } ?? 0
            let events = try await database.withConnection { db in try await EventLog.events(after: cursor, limit: 1_000, on: db) }
            for event in events { dispatch(event) }
            if let last = events.last { state.withLock { $0.cursor = max($0.cursor ?? 0, last.id) } }
            if events.count < 1_000 { return }
        }
    }

    private func dispatch(_ event: RealtimeEvent) {
        let targets: [EventSubscriber] = state.withLock { state in
            let ids: [UUID] = switch EventTopic(named: event.topic) {
            case .user(let user): state.byUser[user] ?? []
            case .group(let group): Array(state.byGroup[group] ?? [])
            case .session(let session): Array(state.bySession[session] ?? [])
            case nil: []
            }
            return ids.compactMap { state.subscribers[$0] }
        }
        for subscriber in targets { subscriber.receive(event, hub: self) }
    }

    /// Ends the streams whose session is no longer live in the database, 500 sessions a query.
    func closeStreamsOfEndedSessions(database: Database) async throws {
        let open = state.withLock { Array($0.subscribers.values) }
        let sessions = Array(Set(open.map(\.session)))
        var live: Set<SessionID> = []
        for start in stride(from: 0, to: sessions.count, by: 500) {
            let chunk = sessions[start..<min(start + 500, sessions.count)].map(\.rawValue)
            let rows = try await database.withConnection { db in
                try await db.select().column("id").from("sessions").where("id", .in, chunk).where("revoked_at", .is, SQLLiteral.null).all()
            }
            for row in rows { live.insert(SessionID(rawValue: try row.decode(column: "id", as: UUID.self))) }
        }
        for subscriber in open where !live.contains(subscriber.session) { subscriber.close() }
    }

    private func tick(now: Date, clock: ContinuousClock.Instant) {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.tick(now: now, clock: clock) }
    }
}

/// One open event stream: what it has sent, its user's group, and where its bytes go.
///
/// Until it has caught up from `Last-Event-ID`, events handed to it wait; then it takes them in id order, skipping any
/// it already sent. Every event passes ``apply(_:_:hub:)``: control events act, group events go out only while the
/// stream's user is in that group.
final class EventSubscriber: Sendable {
    let id = UUID.random()
    let user: UserID
    let session: SessionID
    /// When the access token that opened the stream expires: the stream closes then.
    let expiresAt: Date

    private struct State {
        var group: GroupID?
        /// The last event id taken (sent, or acted on).
        var last: Int64
        var catchingUp = true
        /// Membership changes up to this id are already in the membership read from the database when the stream opened.
        var known: Int64 = .max
        /// Membership changes taken already (one may come twice: read from the log and handed over by the hub).
        var memberships: Set<Int64> = []
        var pending: [RealtimeEvent] = []
        var closed = false
        var lastWrite = ContinuousClock.now
        /// Whether the stream has said it is live (its `retry:` line).
        var announced = false
        var endActions: [@Sendable () -> Void] = []
    }

    private let state: Mutex<State>
    private let output: AsyncStream<ByteBuffer>.Continuation

    init(user: UserID, session: SessionID, expiresAt: Date, resumingAfter last: Int64, output: AsyncStream<ByteBuffer>.Continuation) {
        self.user = user
        self.session = session
        self.expiresAt = expiresAt
        self.output = output
        state = Mutex(State(last: last))
    }

    /// Runs `action` when the stream ends (at once if it has).
    func onEnd(_ action: @escaping @Sendable () -> Void) {
        let ended = state.withLock { state in
            guard !state.closed else { return true }
            state.endActions.append(action)
            return false
        }
        if ended { action() }
    }

    /// Ends the stream (idempotent).
    func close() {
        let actions = state.withLock { state -> [@Sendable () -> Void]? in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.endActions = [] }
            return state.endActions
        }
        guard let actions else { return }
        output.finish()
        for action in actions { action() }
    }

    /// An event of one of the stream's topics, from the hub's reader.
    func receive(_ event: RealtimeEvent, hub: EventHub) {
        let close = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.catchingUp {
                state.pending.append(event)
                return false
            }
            return apply(event, &state, hub: hub) == .close
        }
        if close { self.close() }
    }

    /// Sends what came after `Last-Event-ID` (reading the log with the user's membership from the database), then what
    /// the hub handed over meanwhile; from then on the hub's events go straight out. A change of group met on the way
    /// reads the log again with the new group, from that change on. Changes older than the membership read at the start
    /// are history: a returning member replays their group's events only from their latest joining.
    func catchUp(database: Database, hub: EventHub) async throws {
        let (user, session) = (self.user, self.session)
        // The log's end first, then the membership: every change up to that end is in what is read.
        let (known, membership) = try await database.withConnection { db in
            (try await EventLog.latestID(on: db), try await GroupStore.membership(of: user, on: db))
        }
        state.withLock { state in
            state.group = membership?.group
            state.known = known
        }
        hub.regroup(self, to: membership?.group)
        // A returning member replays the group's events from their latest joining: after the event it wrote.
        var afterJoining = membership?.joinedEventID
        var since = afterJoining == nil ? membership?.joinedAt : nil
        while !Task.isCancelled {
            let (from, group) = state.withLock { ($0.last, $0.group) }
            var subscriptions = [EventSubscription(topic: .user(user), since: nil), EventSubscription(topic: .session(session), since: nil)]
            if let group { subscriptions.append(EventSubscription(topic: .group(group), since: since, afterEventID: afterJoining)) }
            let events = try await database.withConnection { [subscriptions] db in
                try await EventLog.events(after: from, for: subscriptions, limit: 500, on: db)
            }
            // Taken in order; stop at a change of group (read again with the new one) or at a close.
            let (outcome, caughtUp) = state.withLock { state -> (Outcome, Bool) in
                for event in events {
                    let outcome = apply(event, &state, hub: hub)
                    if outcome != .taken { return (outcome, false) }
                }
                guard events.count < 500 else { return (.taken, false) }
                // Nothing more in the log: what the hub handed over meanwhile, then live. The reconnection delay the
                // client should use goes first: a client that has it knows the stream is live.
                if !state.announced {
                    output.yield(ByteBuffer(string: "retry: 3000\n\n"))
                    state.announced = true
                }
                let pending = state.pending
                state.pending = []
                for (index, event) in pending.enumerated() {
                    let outcome = apply(event, &state, hub: hub)
                    if outcome != .taken {
                        if outcome == .regrouped { state.pending = Array(pending[(index + 1)...]) }
                        return (outcome, false)
                    }
                }
                state.catchingUp = false
                return (.taken, true)
            }
            switch outcome {
            case .close:
                close()
                return
            case .regrouped:
                // Events of the new group come after the change that put the user in it: `last` bounds them.
                since = nil
                afterJoining = nil
            case .taken:
                if caughtUp { return }
            }
        }
    }

    private enum Outcome {
        case taken, regrouped, close
    }

    /// Takes one event, in id order: control events act whatever their id — a transaction that took a lower id may
    /// commit after one that took a higher —, once; others go out once, if the stream may see them.
    private func apply(_ event: RealtimeEvent, _ state: inout State, hub: EventHub) -> Outcome {
        switch event.type {
        case EventLog.sessionEnded:
            return .close
        case EventLog.membership:
            state.last = max(state.last, event.id)
            guard event.id > state.known else { return .taken }  // history the stream's starting membership already tells
            guard state.memberships.insert(event.id).inserted else { return .taken }
            let change = try? JSONDecoder().decode(EventLog.MembershipChange.self, from: Data(event.data.utf8))
            let group = change?.groupId.flatMap(GroupID.init)
            guard group != state.group else { return .taken }
            hub.regroup(self, to: group)
            state.group = group
            return .regrouped
        default:
            guard event.id > state.last else { return .taken }
            state.last = event.id
            if case .group(let group) = EventTopic(named: event.topic), group != state.group { return .taken }
            output.yield(event.frame)
            state.lastWrite = .now
            return .taken
        }
    }

    /// Once a second: closes the stream when its token has expired, else writes a keep-alive when it has been quiet.
    func tick(now: Date, clock: ContinuousClock.Instant) {
        guard now < expiresAt else { return close() }
        state.withLock { state in
            guard !state.closed, clock - state.lastWrite >= EventHub.heartbeat else { return }
            output.yield(ByteBuffer(string: ": keep-alive\n\n"))
            state.lastWrite = clock
        }
    }
}

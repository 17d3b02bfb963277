import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Where syncing stands, for a status line or a badge.
public struct SyncStatus: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// Nothing running; the last sync (if any) succeeded.
        case idle
        case syncing
        /// The server could not be reached; changes stay queued and sync resumes with backoff.
        case offline
        /// The server refused or failed the sync; the message says why.
        case error(String)
    }

    public var state: State
    /// Local changes not yet accepted by the server.
    public var pendingCount: Int
    /// When a sync last completed.
    public var lastSyncedAt: Date?

    /// Makes a status (the engine publishes these; fakes and previews make their own).
    public init(state: State, pendingCount: Int, lastSyncedAt: Date?) {
        self.state = state
        self.pendingCount = pendingCount
        self.lastSyncedAt = lastSyncedAt
    }
}

/// A local change the server refused (it failed the collection's validation, for example). It is dropped from the
/// queue so the rest can sync; the app can show the problem and let the user fix the record.
public struct SyncRejection: Sendable, Equatable {
    public var collection: SyncCollection
    public var recordID: String
    public var problem: APIProblem
}

/// Keeps the device's ``LocalStore`` and the server in step: pushes queued changes in batches, then pulls what
/// changed on the server since the last cursor and applies it.
///
/// * ``syncNow()`` runs one sync (waiting for one already running, then running again to include later changes).
/// * ``start()`` syncs now and then every ``Configuration/interval`` (5 minutes by default), and soon after every
///   local change. After a failure it retries with exponential backoff and jitter (from
///   ``Configuration/initialBackoff`` doubling up to ``Configuration/maximumBackoff``, 5 minutes), and local
///   changes do not cut the backoff short.
/// * A cursor the server no longer honours (410 `full_resync_required`) starts a full resync: everything is pulled
///   again and records the server no longer has are dropped, keeping changes still queued.
/// * ``statusUpdates()`` streams ``SyncStatus``.
/// * ``follow(serverEvents:reachability:)`` pulls as soon as the server announces a change made elsewhere (its
///   `sync` events) and as soon as the network comes back, instead of waiting for the next period or backoff.
///
/// The store belongs to one user: when a different user is signed in, it is erased before syncing.
public actor SyncEngine {
    public struct Configuration: Sendable {
        /// Mutations per push (the server takes at most 500).
        public var batchSize = 500
        /// Changes per pull page (the server gives at most 1000).
        public var pageSize = 500
        /// Time between periodic syncs.
        public var interval: Duration = .seconds(300)
        /// First retry delay after a failure.
        public var initialBackoff: Duration = .seconds(2)
        /// Longest retry delay.
        public var maximumBackoff: Duration = .seconds(300)
        /// The device's clock: when a local change was made (a conflict with another device's change of the same
        /// record is settled by it) and when the last sync ended. Tests hand in one they move.
        public var clock: @Sendable () -> Date = { Date.now }

        public init() {}
    }

    public nonisolated let store: LocalStore
    let client: FitBaseClient
    let configuration: Configuration

    public private(set) var status = SyncStatus(state: .idle, pendingCount: 0, lastSyncedAt: nil)
    /// Local changes the server refused, most recent last (the last 100).
    public private(set) var rejections: [SyncRejection] = []

    private let observers = ValueStreams<SyncStatus>()
    private var syncing = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var failures = 0
    private var loop: Task<Void, Never>?
    private var wake: CheckedContinuation<Void, Never>?
    private var wakeRequested = false
    private var pauseNumber = 0
    private var followers: [Task<Void, Never>] = []
    private var sessionWatch: Task<Void, Never>?

    public init(client: FitBaseClient, store: LocalStore, configuration: Configuration = .init()) {
        self.client = client
        self.store = store
        self.configuration = configuration
    }

    public nonisolated var plans: PlanRepository { Repository(store: store, engine: self) }
    public nonisolated var history: HistoryRepository { Repository(store: store, engine: self) }
    public nonisolated var cycle: CycleRepository { Repository(store: store, engine: self) }
    public nonisolated var fertilitySignals: FertilitySignalRepository { Repository(store: store, engine: self) }

    // MARK: Running

    /// Syncs now and then periodically, until ``stop()``. From the first start on, the engine also erases the local
    /// store (destroying its key) whenever the session ends, whatever ended it: a sign-out, the account's deletion, or
    /// the server refusing the session (revoked on another device, a password reset, a refresh token used twice).
    public func start() {
        if sessionWatch == nil {
            sessionWatch = Task { [weak self, client] in
                for await state in await client.sessionStates() {
                    guard case .signedOut(let end) = state, end != .notSignedIn else { continue }
                    await self?.sessionEnded()
                }
            }
        }
        guard loop == nil else { return }
        loop = Task { [weak self] in await self?.run() }
    }

    /// The session ended: syncing stops, and nothing of the user stays on the device.
    private func sessionEnded() async {
        stop()
        try? await store.erase()
    }

    public func stop() {
        loop?.cancel()
        loop = nil
        endPause(pauseNumber)
        followers.forEach { $0.cancel() }
        followers = []
    }

    /// Syncs whenever the server says the user's data changed on another device (`serverEvents`: the `sync` events of
    /// ``FitBaseClient/events(resumingAfter:)``) and whenever `reachability` reports the network back, until
    /// ``stop()``. Either cuts a backoff short. Following the events holds one of the user's event streams.
    public func follow(serverEvents: Bool = true, reachability: (any ReachabilityMonitor)? = nil) {
        if serverEvents {
            let events = client.events()
            followers.append(Task { [weak self] in
                do {
                    for try await event in events {
                        guard case .sync = event.kind else { continue }
                        await self?.requestSync()
                    }
                } catch {
                    // The stream ended for good (signed out, refused): periodic sync carries on.
                }
            })
        }
        if let reachability {
            // Subscribed before the task starts, so a change made right after this call is not missed.
            let updates = reachability.updates()
            followers.append(Task { [weak self] in
                var wasReachable = true
                for await reachable in updates {
                    if reachable && !wasReachable { await self?.requestSync() }
                    wasReachable = reachable
                }
            })
        }
    }

    /// Syncs soon, whatever the backoff: the periodic loop wakes now if it runs, else one sync starts. What
    /// ``follow(serverEvents:reachability:)`` does on a `sync` event, for an app that reads the events itself.
    public func requestSync() {
        failures = 0
        if loop == nil {
            Task { try? await self.syncNow() }
        } else if let wake {
            self.wake = nil
            wake.resume()
        } else {
            wakeRequested = true
        }
    }

    private func run() async {
        while !Task.isCancelled {
            try? await syncNow()
            guard !Task.isCancelled else { return }
            await pause(failures == 0 ? configuration.interval : backoff(afterFailures: failures))
        }
    }

    /// The delay before retry number `failures`: exponential from the initial backoff, capped, with "equal jitter"
    /// (between half and all of it) so devices that failed together do not retry together.
    public nonisolated func backoff(afterFailures failures: Int) -> Duration {
        let initial = Double(configuration.initialBackoff.components.seconds) + Double(configuration.initialBackoff.components.attoseconds) / 1e18
        let cap = Double(configuration.maximumBackoff.components.seconds)
        let exponential = min(cap, initial * pow(2, Double(min(failures, 30) - 1)))
        return .milliseconds(Int(exponential * Double.random(in: 0.5...1.0) * 1000))
    }

    private func pause(_ delay: Duration) async {
        if wakeRequested {
            wakeRequested = false
            return
        }
        pauseNumber += 1
        let number = pauseNumber
        let timer = Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.endPause(number)
        }
        await withCheckedContinuation { wake = $0 }
        timer.cancel()
    }

    private func endPause(_ number: Int) {
        guard number == pauseNumber, let wake else { return }
        self.wake = nil
        wake.resume()
    }

    /// A repository queued a change: update the pending count and sync soon (unless backing off after failures).
    func localChangeQueued() async {
        status.pendingCount = (try? await store.pendingCount()) ?? status.pendingCount
        publish()
        guard failures == 0 else { return }
        if let wake {
            self.wake = nil
            wake.resume()
        } else {
            wakeRequested = true
        }
    }

    // MARK: Syncing

    /// Pushes every queued change, then pulls every change from the server. Throws what stopped it; the status
    /// says the same.
    public func syncNow() async throws(FitBaseError) {
        try await sync(pulling: true)
    }

    /// Pushes every queued change without pulling (to flush the queue before signing out, for example).
    public func pushPending() async throws(FitBaseError) {
        try await sync(pulling: false)
    }

    private func sync(pulling: Bool) async throws(FitBaseError) {
        while syncing { await withCheckedContinuation { waiters.append($0) } }
        syncing = true
        defer {
            syncing = false
            let waiting = waiters
            waiters = []
            waiting.forEach { $0.resume() }
        }
        if status.lastSyncedAt == nil, let saved = try? await store.state("last_synced_at"), let seconds = Double(saved) {
            status.lastSyncedAt = Date(timeIntervalSince1970: seconds)
        }
        status.state = .syncing
        publish()
        var failure: FitBaseError?
        do throws(FitBaseError) {
            try await adoptSignedInUser()
            try await pushQueued()
            if pulling {
                try await pullChanges()
                let now = configuration.clock()
                status.lastSyncedAt = now
                try? await store.setState("last_synced_at", to: String(now.timeIntervalSince1970))
            }
            failures = 0
            status.state = .idle
        } catch {
            failure = error
            failures += 1
            if case .transport = error { status.state = .offline } else { status.state = .error(error.userFacingMessage) }
        }
        status.pendingCount = (try? await store.pendingCount()) ?? status.pendingCount
        publish()
        if let failure { throw failure }
    }

    private func adoptSignedInUser() async throws(FitBaseError) {
        guard let user = await client.currentUserID() else { throw (.notSignedIn) }
        try await storage {
            if let owner = try await store.state("user_id"), owner != user.description { try await store.erase() }
            try await store.setState("user_id", to: user.description)
        }
    }

    private func pushQueued() async throws(FitBaseError) {
        while true {
            let batch = try await storage { try await store.nextBatch(limit: configuration.batchSize) }
            if batch.isEmpty { return }
            let results = try await push(batch)
            let byID = Dictionary(results.map { ($0.mutationId, $0) }, uniquingKeysWith: { first, _ in first })
            var answers: [(LocalStore.PendingMutation, LocalStore.Settlement)] = []
            for mutation in batch {
                guard let result = byID[mutation.mutationID] else { continue }  // unanswered: stays queued
                switch result.status {
                case .applied:
                    answers.append((mutation, .applied(version: result.version ?? 0)))
                case .conflict where result.resolution == .clientWins:
                    answers.append((mutation, .applied(version: result.version ?? 0)))
                case .conflict:
                    let record = result.serverRecord
                    var data: Data?
                    if let record, !record.deleted, let payload = record.data { data = try Self.json(payload) }
                    answers.append((mutation, .serverWins(version: record?.version ?? result.version ?? 0, data: data, updatedAt: record?.updatedAt ?? configuration.clock())))
                case .rejected:
                    answers.append((mutation, .rejected))
                    if let problem = result.problem {
                        rejections.append(SyncRejection(collection: mutation.collection, recordID: mutation.recordID, problem: APIProblem(problem)))
                        if rejections.count > 100 { rejections.removeFirst(rejections.count - 100) }
                    }
                }
            }
            try await storage { try await store.settle(answers) }
            status.pendingCount = (try? await store.pendingCount()) ?? status.pendingCount
            publish()
        }
    }

    private func pullChanges() async throws(FitBaseError) {
        var resyncing = try await storage { try await store.state("resync") } != nil
        var cursor = resyncing ? nil : try await storage { try await store.state("cursor") }
        while true {
            let page = try await fetchPage(since: cursor)
            switch page.status {
            case .ok:
                try await storage { try await store.apply(page.changes, cursor: page.cursor) }
                cursor = page.cursor
                if page.hasMore { continue }
                if resyncing { try await storage { try await store.finishResync() } }
                return
            case .gone, .badRequest:
                // The cursor is too old (or not one the server knows): start over from nothing.
                guard !resyncing else { throw (.unexpectedResponse(statusCode: 410)) }
                try await storage {
                    try await store.beginResync()
                    try await store.setState("resync", to: "1")
                }
                resyncing = true
                cursor = nil
            default:
                throw .from(statusCode: page.status.code, problem: page.problem)
            }
        }
    }

    // MARK: Status

    /// The status now and at every change, until the stream is dropped.
    public func statusUpdates() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = observers.make(buffer: 8)
        continuation.yield(status)
        return stream
    }

    private func publish() {
        observers.send(status)
    }

    // MARK: Helpers

    private func storage<T>(_ operation: () async throws -> T) async throws(FitBaseError) -> T {
        do {
            return try await operation()
        } catch {
            throw .storage(String(describing: error))
        }
    }

    static func json(_ object: Components.Schemas.SyncRecordData) throws(FitBaseError) -> Data {
        do { return try object.jsonData() } catch { throw .unexpectedResponse(statusCode: 200) }
    }
}

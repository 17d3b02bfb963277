import Foundation
import Logging
import PostgresKit
import PostgresNIO
import SQLKit
import ServiceLifecycle
import Synchronization

/// A kind of data instances keep in memory, whose every change bumps its generation.
package enum CachedData: String, Sendable, CaseIterable {
    /// Workouts and programs (``CatalogCache``).
    case catalog
    /// Which sessions are live and their accounts' roles (``SessionCache``).
    case sessions
    /// Remote config flags and their overrides (``RemoteConfigStore``).
    case remoteConfig = "remote-config"

    /// Whether a change must be seen by every instance's very next request (read per request on PostgreSQL), or may
    /// reach other instances by notification, within milliseconds.
    ///
    /// Sessions are exact: a session ended or a role taken away on one instance is refused by the next request on any
    /// other. The catalog and remote config are content an operator edits: the instance that made the edit sees it at
    /// once, the others when its notification arrives, as a content delivery network would serve it. Asking for their
    /// generation before every read would cost each catalog page a round trip (on a 2-core host, half its pace).
    var exactAcrossInstances: Bool { self == .sessions }
}

/// The generations of cached data: how an instance knows, cheaply, that what it holds in memory is still what the
/// database holds.
///
/// Every write that changes cached data calls ``bump(_:on:)`` in its transaction: the `cache_generations` row moves on
/// in the database (for every instance and process) and, once the transaction commits, this instance forgets what it
/// knew, so its very next read asks again. A reader takes ``current(_:)`` *before* it reads the data it will cache and
/// keeps the data under that generation; a generation never goes back, so data kept under an old one is never served
/// as new.
///
/// * PostgreSQL (several instances), data exact across instances (``CachedData/exactAcrossInstances``): ``current(_:)``
///   reads the row — one small query instead of the data's: a write committed on one instance is seen by the next read
///   on any other. Callers of one moment share a read that started after they arrived (``sharedRead(_:on:)``).
/// * PostgreSQL, other data: a bump also notifies every instance (`NOTIFY` on ``channel``, delivered at commit), whose
///   listener (``listen(configuration:logger:)``) forgets that generation. While its listener is connected an instance
///   trusts a generation it read after the listener started, for at most ``recheck``; without one it reads the row
///   each time, as for exact data.
/// * SQLite (one serving process): changes made through this process — through any pool it opened on the file — are
///   seen at once; the row is read again at most every ``recheck`` so that a change made by another process (the
///   `fitbase` CLI granting a role or importing a catalog) is seen within that time.
package final class CacheGenerations: Sendable {
    private struct Known {
        var generation: Int64
        var checkedAt: ContinuousClock.Instant
    }

    /// How long an instance trusts a generation it read without reading it again (SQLite; PostgreSQL's notified data).
    static let recheck: Duration = .seconds(1)

    private let engine: DatabaseEngine
    private let known = Mutex<(generations: [CachedData: Known], forgottenAt: [CachedData: ContinuousClock.Instant])>(([:], [:]))
    /// PostgreSQL: since when this instance's listener has been hearing bumps (`nil` while it is not connected).
    private let listeningSince = Mutex<ContinuousClock.Instant?>(nil)

    init(engine: DatabaseEngine) {
        self.engine = engine
    }

    /// SQLite: the generations of every pool this process opens on one file, shared, so a write through any of them
    /// (e.g. a second pool a tool or test opens beside the server's) is forgotten by all at once.
    private static let sqliteFiles = Mutex<[String: CacheGenerations]>([:])

    /// The generations a `Database` at `location` keeps: one per SQLite file in the process, one per pool otherwise.
    static func forDatabase(at location: DatabaseLocation) -> CacheGenerations {
        guard case .sqlite(let path) = location else { return CacheGenerations(engine: location.engine) }
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        return sqliteFiles.withLock { files in
            if let shared = files[key] { return shared }
            let generations = CacheGenerations(engine: .sqlite)
            files[key] = generations
            return generations
        }
    }

    /// The generation of `data` now, from memory when this instance may trust it, else from the database.
    package func current(_ data: CachedData, on database: Database) async throws -> Int64 {
        if let trusted = trusted(data) { return trusted }
        let checkedAt = ContinuousClock.now
        if engine == .postgres {
            let generation = try await sharedRead(data, on: database)
            if !data.exactAcrossInstances, let since = listeningSince.withLock({ $0 }), since <= checkedAt { keep(generation, of: data, readAt: checkedAt) }
            return generation
        }
        let generation = try await database.withConnection { db in try await Self.read(data, on: db) }
        keep(generation, of: data, readAt: checkedAt)
        return generation
    }

    /// Keeps `generation`, read by a read that began no earlier than `readAt`, as what this instance knows of `data`.
    private func keep(_ generation: Int64, of data: CachedData, readAt: ContinuousClock.Instant) {
        known.withLock { known in
            // A read that began before a commit forgot the generation may have read the old one: it answers this
            // caller (whose request overlapped the write) but is not kept.
            if let forgotten = known.forgottenAt[data], forgotten >= readAt { return }
            if let existing = known.generations[data], existing.checkedAt > readAt { return }
            known.generations[data] = Known(generation: generation, checkedAt: readAt)
        }
    }

    /// The generation of `data` this instance may trust now without reading it (``current(_:on:)`` would answer it
    /// from memory); `nil` when it must be read.
    func trusted(_ data: CachedData) -> Int64? {
        guard let known = known.withLock({ $0.generations[data] }), ContinuousClock.now - known.checkedAt < Self.recheck else { return nil }
        switch engine {
        case .sqlite: return known.generation
        case .postgres:
            // Kept only while listening; a listener that stopped since has made the instance forget it.
            return data.exactAcrossInstances ? nil : known.generation
        }
    }

    /// PostgreSQL: reads of a generation, one at a time, each shared by every caller that arrived before it started.
    ///
    /// A read that starts after a caller arrived sees every commit made before the caller's request (on any
    /// instance), which is all the exactness a read by the caller itself would give. So a caller takes the read in
    /// flight when it started after the caller arrived; otherwise it waits for that read to end and takes the next,
    /// started by the first caller to get there. Under load the requests of a moment share one read instead of
    /// making one each (a round trip before every authenticated request and every catalog read).
    private func sharedRead(_ data: CachedData, on database: Database) async throws -> Int64 {
        let arrival = ContinuousClock.now
        var waitedFor: Int?
        while true {
            let (read, join) = reads.withLock { state -> (SharedRead, Bool) in
                if let read = state.reads[data] {
                    if read.startedAt >= arrival { return (read, true) }
                    if read.number != waitedFor { return (read, false) }
                }
                state.started += 1
                let read = SharedRead(
                    number: state.started, startedAt: .now, task: Task { try await database.withConnection { db in try await Self.read(data, on: db) } }
                )
                state.reads[data] = read
                return (read, true)
            }
            if join { return try await read.task.value }
            _ = try? await read.task.value  // began before this caller arrived: wait it out, then take a later one
            waitedFor = read.number
        }
    }

    private struct SharedRead: Sendable {
        var number: Int
        var startedAt: ContinuousClock.Instant
        var task: Task<Int64, any Error>
    }

    private let reads = Mutex<(reads: [CachedData: SharedRead], started: Int)>(([:], 0))

    /// Moves `data`'s generation on, in the caller's transaction; this instance forgets what it knew once the
    /// transaction commits, and on PostgreSQL every instance's listener hears of it then.
    package static func bump(_ data: CachedData, on db: any SQLDatabase) async throws {
        guard let hooks = TransactionHooks.current else {
            try await bumpRow(data.rawValue).run(on: db)
            assertionFailure("CacheGenerations.bump outside a transaction")
            return
        }
        switch hooks.engine {
        case .sqlite: try await bumpRow(data.rawValue).run(on: db)
        case .postgres: try await bumpAndNotify(data.rawValue, data.rawValue).run(on: db)
        }
        let generations = hooks.generations
        hooks.afterCommit(key: "cache-generation.\(data.rawValue)") { generations?.forget(data) }
    }

    private static let bumpRow = StoredStatement(#"UPDATE "cache_generations" SET "generation" = "generation" + 1 WHERE "name" = ?"#)
    private static let bumpAndNotify = StoredStatement(
        #"UPDATE "cache_generations" SET "generation" = "generation" + 1 WHERE "name" = ? RETURNING pg_notify('\#(channel)', ?)"#
    )

    /// The channel bumps are announced on (PostgreSQL); a notification's payload names the ``CachedData``.
    static let channel = "fitbase_cache_generations"

    /// Forgets what this instance knew of `data`'s generation: the next ``current(_:on:)`` reads the row.
    func forget(_ data: CachedData) {
        known.withLock { known in
            known.generations[data] = nil
            known.forgottenAt[data] = ContinuousClock.now
        }
    }

    /// PostgreSQL: whether this instance's listener hears bumps now (notified data is then trusted between reads).
    var isListening: Bool { listeningSince.withLock { $0 != nil } }

    /// Forgets every generation; from `since` on (a listener's start), or from now on nothing (`nil`: no listener), this
    /// instance may keep what it reads of notified data.
    private func listening(since: ContinuousClock.Instant?) {
        listeningSince.withLock { $0 = since }
        for data in CachedData.allCases { forget(data) }
    }

    /// PostgreSQL: hears every instance's bumps on a connection of its own (``PostgresChannelListener``), until
    /// cancelled, and forgets each bumped generation. Trust in notified data begins
    /// once the `LISTEN` has taken effect and ends when the connection is lost.
    func listen(configuration: PostgresConnection.Configuration, logger: Logger) async {
        await PostgresChannelListener.listen(
            on: Self.channel, configuration: configuration, name: "cache generation listener", logger: logger,
            started: { self.listening(since: .now) },
            heard: { notification in
                if let data = CachedData(rawValue: notification.payload) { self.forget(data) } else { self.listening(since: .now) }
            },
            stopped: { self.listening(since: nil) }
        )
    }

    private static func read(_ data: CachedData, on db: any SQLDatabase) async throws -> Int64 {
        try await selectGeneration(data.rawValue).first(on: db)?.decode(column: "generation", as: Int64.self) ?? 0
    }

    private static let selectGeneration = StoredStatement(#"SELECT "generation" FROM "cache_generations" WHERE "name" = ?"#)
}

/// Runs a PostgreSQL database's cache generation listener (``CacheGenerations/listen(configuration:logger:)``) until
/// graceful shutdown; on SQLite there is nothing to listen to.
struct CacheGenerationListener: Service {
    let database: Database

    func run() async throws {
        guard case .postgres(let url) = database.location else {
            try? await gracefulShutdown()  // a service that returns would stop the application
            return
        }
        let configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        let (generations, logger) = (database.generations, database.logger)
        await cancelWhenGracefulShutdown { await generations.listen(configuration: configuration, logger: logger) }
    }
}

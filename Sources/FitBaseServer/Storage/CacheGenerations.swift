import Foundation
import SQLKit
import Synchronization

/// A kind of data instances keep in memory, whose every change bumps its generation.
package enum CachedData: String, Sendable, CaseIterable {
    /// Workouts and programs (``CatalogCache``).
    case catalog
    /// Which sessions are live and their accounts' roles (``SessionCache``).
    case sessions
    /// Remote config flags and their overrides (``RemoteConfigStore``).
    case remoteConfig = "remote-config"
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
/// * PostgreSQL (several instances): ``current(_:)`` reads the row — one small query instead of the data's, and
///   exact across instances: a write committed on one instance is seen by the next read on any other. Callers of one
///   moment share a read that started after they arrived (``sharedRead(_:on:)``).
/// * SQLite (one serving process): changes made through this process — through any pool it opened on the file — are
///   seen at once; the row is read again at most every ``sqliteRecheck`` so that a change made by another process (the
///   `fitbase` CLI granting a role or importing a catalog) is seen within that time.
package final class CacheGenerations: Sendable {
    private struct Known {
        var generation: Int64
        var checkedAt: ContinuousClock.Instant
    }

    /// How long a SQLite instance trusts a generation it read without reading it again.
    static let sqliteRecheck: Duration = .seconds(1)

    private let engine: DatabaseEngine
    private let known = Mutex<(generations: [CachedData: Known], forgottenAt: [CachedData: ContinuousClock.Instant])>(([:], [:]))

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
        if engine == .postgres { return try await sharedRead(data, on: database) }
        let checkedAt = ContinuousClock.now
        let generation = try await database.withConnection { db in try await Self.read(data, on: db) }
        known.withLock { known in
            // A read that began before a commit forgot the generation may have read the old one: it answers this
            // caller (whose request overlapped the write) but is not kept.
            if let forgotten = known.forgottenAt[data], forgotten >= checkedAt { return }
            if let existing = known.generations[data], existing.checkedAt > checkedAt { return }
            known.generations[data] = Known(generation: generation, checkedAt: checkedAt)
        }
        return generation
    }

    /// SQLite: the generation of `data` this instance may trust now without reading it (``current(_:on:)`` would answer
    /// it from memory); `nil` on PostgreSQL, or when it must be read.
    func trusted(_ data: CachedData) -> Int64? {
        guard engine == .sqlite, let known = known.withLock({ $0.generations[data] }), ContinuousClock.now - known.checkedAt < Self.sqliteRecheck
        else { return nil }
        return known.generation
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
    /// transaction commits.
    package static func bump(_ data: CachedData, on db: any SQLDatabase) async throws {
        try await db.update("cache_generations").set(SQLIdentifier("generation"), to: SQLRaw("generation + 1"))
            .where("name", .equal, data.rawValue).run()
        guard let hooks = TransactionHooks.current else {
            assertionFailure("CacheGenerations.bump outside a transaction")
            return
        }
        let generations = hooks.generations
        hooks.afterCommit(key: "cache-generation.\(data.rawValue)") { generations?.forget(data) }
    }

    /// Forgets what this instance knew of `data`'s generation: the next ``current(_:on:)`` reads the row.
    func forget(_ data: CachedData) {
        known.withLock { known in
            known.generations[data] = nil
            known.forgottenAt[data] = ContinuousClock.now
        }
    }

    private static func read(_ data: CachedData, on db: any SQLDatabase) async throws -> Int64 {
        try await selectGeneration(data.rawValue).first(on: db)?.decode(column: "generation", as: Int64.self) ?? 0
    }

    private static let selectGeneration = StoredStatement(#"SELECT "generation" FROM "cache_generations" WHERE "name" = ?"#)
}

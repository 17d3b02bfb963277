import FitBaseCore
import Foundation
import SQLKit
import Synchronization

extension SyncFeed {
    /// The feed entries of one push, written together: a push of 500 mutations takes its sequence numbers in one
    /// statement and writes its entries in two, instead of two statements per mutation. On PostgreSQL every statement
    /// is a round trip, and these two were most of a push's.
    ///
    /// ``SyncPusher`` installs one for its transaction (``current``). While it is installed, ``SyncFeed/record(_:id:of:deleted:updatedAt:changedAt:currentVersion:on:)``
    /// and ``SyncFeed/reserve(_:of:on:)`` for the pushing user take numbers from the block the push reserved and keep
    /// the entries in memory; every read of `sync_changes` in ``SyncFeed`` writes what is kept first, so reads inside
    /// the push see its writes as before. A savepoint rolled back takes back the entries kept since it began
    /// (``mark()``, ``restore(_:)``); numbers taken meanwhile are skipped, as those of replaced entries are.
    ///
    /// It also remembers what the push's writes read that the push itself cannot change (``remembered(_:_:)``).
    final class Batch: Sendable {
        /// The batch of the push the current task is applying (`nil` elsewhere).
        @TaskLocal static var current: Batch?

        struct Key: Hashable, Sendable {
            var collection: SyncCollection
            var recordID: String
        }

        struct Entry: Sendable {
            var seq: Int
            var version: Int
            var deleted: Bool
            var updatedAt: Date
            var changedAt: Date
        }

        /// The entries kept when a savepoint began.
        struct Mark: Sendable {
            fileprivate let pending: [Key: Entry]
        }

        private struct State: Sendable {
            /// The next reserved number, and one past the last.
            var next: Int
            var end: Int
            var pending: [Key: Entry] = [:]
            var remembered: [String: any Sendable] = [:]
        }

        let user: UserID
        private let state: Mutex<State>

        /// A batch for `user` holding no numbers yet (``reserve(_:on:)`` takes them).
        init(user: UserID) {
            self.user = user
            state = Mutex(State(next: 0, end: 0))
        }

        /// Reserves `count` more numbers of the user for the push's entries (taking the user's sequence row, so this
        /// runs outside any savepoint: a savepoint rolled back would give the numbers back to the database but not
        /// to the batch).
        func reserve(_ count: Int, on db: any SQLDatabase) async throws {
            guard count > 0 else { return }
            let first = try await SyncFeed.reserveBlock(count, of: user, on: db)
            state.withLock { $0.next = first; $0.end = first + count }
        }

        /// `count` consecutive reserved numbers (the first), or `nil` when fewer are left: the caller takes them
        /// from the database.
        fileprivate func take(_ count: Int) -> Int? {
            state.withLock { state in
                guard state.end - state.next >= count else { return nil }
                defer { state.next += count }
                return state.next
            }
        }

        fileprivate func keep(_ key: Key, _ entry: Entry) {
            state.withLock { $0.pending[key] = entry }
        }

        func mark() -> Mark {
            Mark(pending: state.withLock { $0.pending })
        }

        func restore(_ mark: Mark) {
            state.withLock { $0.pending = mark.pending }
        }

        /// Writes the entries kept so far (the latest of each record), 250 rows a statement.
        func flush(on db: any SQLDatabase) async throws {
            let entries = state.withLock { state in
                defer { state.pending = [:] }
                return state.pending.sorted { $0.value.seq < $1.value.seq }
            }
            for start in stride(from: 0, to: entries.count, by: 250) {
                let chunk = entries[start..<min(start + 250, entries.count)]
                var binds: [any Encodable & Sendable] = []
                binds.reserveCapacity(chunk.count * 8)
                for (key, entry) in chunk {
                    binds += [user.rawValue, key.collection.rawValue, key.recordID, entry.seq, entry.version, entry.deleted, entry.updatedAt, entry.changedAt] as [any Encodable & Sendable]
                }
                try await SyncFeed.upsertChanges(rows: chunk.count, binds).run(on: db)
            }
        }

        /// Writes the current batch's kept entries, if a batch is installed: every read of `sync_changes` starts here.
        static func flushCurrent(on db: any SQLDatabase) async throws {
            try await current?.flush(on: db)
        }

        /// What `load` answers, read once per push under `key` (read each time outside a push): for what a push's
        /// writes read that no write of the push changes (the pushing user's group membership).
        static func remembered<Value: Sendable>(_ key: String, _ load: () async throws -> Value) async throws -> Value {
            guard let batch = current else { return try await load() }
            if let known = batch.state.withLock({ $0.remembered[key] }), let value = known as? Value { return value }
            let value = try await load()
            batch.state.withLock { $0.remembered[key] = value }
            return value
        }
    }

    /// The batch installed for `user`'s writes, if any.
    fileprivate static func batch(of user: UserID) -> Batch? {
        guard let batch = Batch.current, batch.user == user else { return nil }
        return batch
    }

    /// Enters a change into the current batch instead of the database, when a batch is installed for `user` and has
    /// a number left; `nil` otherwise.
    static func batched(
        _ collection: SyncCollection, id: String, of user: UserID, deleted: Bool, updatedAt: Date, changedAt: Date, version: Int
    ) -> SyncChange? {
        guard let batch = batch(of: user), let seq = batch.take(1) else { return nil }
        batch.keep(Batch.Key(collection: collection, recordID: id), Batch.Entry(seq: seq, version: version, deleted: deleted, updatedAt: updatedAt, changedAt: changedAt))
        return SyncChange(collection: collection, recordID: id, seq: seq, stamp: RecordStamp(version: version, updatedAt: updatedAt, deleted: deleted))
    }

    /// `count` numbers from the current batch of `user`, when it has them left.
    static func batchedNumbers(_ count: Int, of user: UserID) -> Int? {
        batch(of: user)?.take(count)
    }
}

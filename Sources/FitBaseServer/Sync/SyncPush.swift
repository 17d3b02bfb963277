import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import SQLKit

/// `POST /v1/sync/push`: mutations a device made offline.
///
/// A push runs in two steps. First every mutation is checked outside any transaction by its collection (see
/// ``SyncedCollection``), exactly as its REST endpoint checks a body, giving either the write to make or the problem;
/// what checking reads (profile, periods, catalog workouts, consent) is read once per push (``PushReads``). Then one
/// transaction applies them in order: a replayed `mutationId` (stored earlier, or earlier in the same push) returns its
/// first result, otherwise the collection's ``ConflictPolicy`` settles the write against the record's stamp in the
/// feed, the collection's one write path makes the write with its effects, and the result is stored under the
/// `mutationId`. A write that can fail on a constraint (another period starting the same day) runs inside a
/// savepoint, rolled back to reject it alone.
struct SyncPusher: Sendable {
    /// The most mutations one push may carry.
    static let maximumMutations = 500

    let database: Database
    /// What each collection checks, writes and shows.
    let collections: SyncedCollections

    /// Applies `body`'s mutations for `caller` at `now`, answering one result per mutation in order.
    func push(_ body: Components.Schemas.SyncPush, by caller: Caller, now: Date) async throws -> [Components.Schemas.SyncMutationResult] {
        guard body.mutations.count <= Self.maximumMutations else {
            throw Problem.batchTooLarge("mutations", maximum: Self.maximumMutations, noun: "mutations", request: "A push")
        }
        let user = caller.user
        let reads = PushReads(caller: caller, now: now)
        let byCollection = Dictionary(grouping: body.mutations) { $0.collection }
        for collection in collections.all {
            guard let mutations = byCollection[collection.collection] else { continue }
            try await collection.prepare(mutations, reads: reads)
        }
        var pending: [PendingMutation] = []
        pending.reserveCapacity(body.mutations.count)
        for (index, mutation) in body.mutations.enumerated() {
            pending.append(try await prepare(mutation, at: index, reads: reads, now: now))
        }
        do {
            return try await apply(pending, user: user, now: now, batching: true)
        } catch is BatchedRowRefused {
            // A record id was taken by another user after the check: again, one statement per row, which rejects that
            // mutation alone.
            return try await apply(pending, user: user, now: now, batching: false)
        }
    }

    /// Applies checked mutations in one transaction. `batching`: rows are written a table at a time
    /// (``BatchingDatabase``).
    private func apply(
        _ prepared: [PendingMutation], user: UserID, now: Date, batching: Bool
    ) async throws -> [Components.Schemas.SyncMutationResult] {
        let collections = self.collections
        return try await database.transaction(groupedBy: user.rawValue) { connection in
            let db: any SQLDatabase = batching ? BatchingDatabase(connection) : connection
            // Holding the user's sequence row for the whole push orders concurrent pushes of one user (PostgreSQL),
            // so a mutation id's stored result is always seen by a later push.
            try await SyncFeed.lockSequence(of: user, on: db)
            var answered = try await SyncMutationResults.stored(of: prepared.map(\.mutationID), user: user, on: db)
            let unanswered = prepared.filter { answered[$0.mutationID] == nil }
            var records = try await PushRecords.read(unanswered, collections: collections, user: user, on: db)
            // One number for each mutation that may write (each writes at most one feed entry), reserved at once.
            let batch = SyncFeed.Batch(user: user)
            try await batch.reserve(unanswered.filter { !$0.isRejected }.count, on: db)
            return try await SyncFeed.Batch.$current.withValue(batch) {
                var results: [Components.Schemas.SyncMutationResult] = []
                results.reserveCapacity(prepared.count)
                var kept: [Components.Schemas.SyncMutationResult] = []
                for mutation in prepared {
                    if let earlier = answered[mutation.mutationID] {
                        results.append(earlier)
                        continue
                    }
                    let result = try await Self.apply(mutation, collections: collections, user: user, now: now, records: &records, on: db)
                    if result.status != .rejected || !Self.isUnkeyed(mutation) {
                        // Results are stored in clear (to answer replays): a sealed collection's keeps the version only,
                        // and a device replaying it pulls the record from the feed.
                        var stored = result
                        if collections[mutation.collection].isSealed { stored.serverRecord = nil }
                        answered[mutation.mutationID] = stored
                        kept.append(stored)
                    }
                    results.append(result)
                }
                try await batch.flush(on: db)
                try await SyncMutationResults.store(kept, user: user, now: now, on: db)
                var applied: [SyncCollection: Int] = [:]
                for (mutation, result) in zip(prepared, results) where result.status != .rejected {
                    applied[mutation.collection, default: 0] += 1
                }
                for (collection, count) in applied.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                    try await collections[collection].pushed(count, of: user, now: now, on: db)
                }
                try await (db as? BatchingDatabase)?.flush()  // rows still waiting: before the commit
                return results
            }
        }
    }

    // MARK: Checking

    /// A mutation checked and ready to apply.
    struct PendingMutation: Sendable {
        enum Outcome: Sendable {
            case upsert(any SyncedWrite)
            case delete
            case rejected(Problem)
        }

        /// Its place in the push, for field paths.
        var index: Int
        var mutationID: String
        var collection: SyncCollection
        /// The record id in its canonical form (lower-case UUID, or `profile`).
        var recordID: String
        var operation: SyncOperation
        var baseVersion: Int?
        /// The client's `updatedAt`, no later than the server's clock.
        var updatedAt: Date
        var outcome: Outcome

        var isRejected: Bool {
            if case .rejected = outcome { true } else { false }
        }
    }

    private func prepare(_ mutation: Components.Schemas.SyncMutation, at index: Int, reads: PushReads, now: Date) async throws -> PendingMutation {
        // The collection is Core's own type; the operation's generated enum has Core's cases (CoreRecordContractTests holds
        // them equal): one it lacks is refused by name, never taken for another.
        let collection = mutation.collection
        guard let operation = SyncOperation(rawValue: mutation.op.rawValue) else {
            throw Problem.invalidRequest(
                "mutations[\(index)].op is not an operation this server knows.", fieldErrors: [.init(field: "mutations[\(index)].op", message: "is not upsert or delete")]
            )
        }
        var pending = PendingMutation(
            index: index, mutationID: mutation.mutationId, collection: collection, recordID: mutation.id, operation: operation,
            baseVersion: mutation.baseVersion, updatedAt: min(mutation.updatedAt, now), outcome: .delete
        )
        do {
            let (recordID, outcome) = try await checked(mutation, in: collections[collection], operation: operation, reads: reads, updatedAt: pending.updatedAt)
            pending.recordID = recordID
            pending.outcome = outcome
        } catch let problem as Problem {
            pending.outcome = .rejected(problem.prefixingFields(with: "mutations[\(index)]."))
        }
        return pending
    }

    /// The canonical record id and the write, or the problem with field paths relative to the mutation.
    private func checked(
        _ mutation: Components.Schemas.SyncMutation, in collection: any SyncedCollection, operation: SyncOperation, reads: PushReads, updatedAt: Date
    ) async throws -> (String, PendingMutation.Outcome) {
        if mutation.mutationId.isEmpty || mutation.mutationId.count > 100 {
            throw Problem.invalidRequest("mutationId must be 1–100 characters.", fieldErrors: [.init(field: "mutationId", message: "must be 1–100 characters")])
        }
        if let base = mutation.baseVersion, base < 1 {
            throw Problem.invalidRequest("baseVersion starts at 1.", fieldErrors: [.init(field: "baseVersion", message: "must be at least 1")])
        }
        let recordID = try collection.recordID(mutation.id)
        guard operation == .upsert else {
            try await collection.checkDelete(id: recordID, reads: reads)
            return (recordID, .delete)
        }
        do {
            return (recordID, .upsert(try await collection.checkUpsert(mutation.data, id: recordID, reads: reads, updatedAt: updatedAt)))
        } catch let problem as Problem where problem.code == .validationFailed {
            throw problem.prefixingFields(with: "data.")
        }
    }
}

extension SyncWire {
    /// Decodes a mutation's `data` as the collection's REST body, naming the field at fault.
    static func decode<Body: Decodable>(_ type: Body.Type, from data: Components.Schemas.SyncRecordData?) throws(Problem) -> Body {
        guard let data else {
            throw Problem.invalidRequest("data is required to upsert.", fieldErrors: [.init(field: "data", message: "is required to upsert")])
        }
        do {
            return try data.decode(Body.self, using: SyncMutationResults.resultCoding.decoder)
        } catch let error as DecodingError {
            throw ProblemMapping.problem(forDecoding: error).prefixingFields(with: "data.")
        } catch {
            throw Problem.invalidRequest("data is not a JSON object.", fieldErrors: [.init(field: "data", message: "must be a JSON object")])
        }
    }
}

extension SyncPusher {
    // MARK: Applying

    /// A rejection for an unusable `mutationId`: answered, never stored (there is no key to store it under).
    private static func isUnkeyed(_ mutation: PendingMutation) -> Bool {
        guard case .rejected(let problem) = mutation.outcome else { return false }
        return problem.fieldErrors.contains { $0.field.hasSuffix("].mutationId") }
    }

    /// Applies one mutation on `db` (its result is stored by the caller, unless the mutation is unkeyed). A write that
    /// can fail on a constraint runs inside a savepoint, rolled back to reject it alone.
    private static func apply(
        _ mutation: PendingMutation, collections: SyncedCollections, user: UserID, now: Date, records: inout PushRecords, on db: any SQLDatabase
    ) async throws -> Components.Schemas.SyncMutationResult {
        if isUnkeyed(mutation), case .rejected(let problem) = mutation.outcome { return rejected(mutation, problem) }
        let result: Components.Schemas.SyncMutationResult
        if case .upsert(let write) = mutation.outcome, write.canViolateConstraint {
            // The feed entries the push keeps in memory are taken back with the savepoint's writes.
            let mark = SyncFeed.Batch.current?.mark()
            try await Savepoint.begin("sync_mutation", on: db)
            do {
                let written = try await self.write(mutation, in: collections, user: user, now: now, records: &records, on: db)
                try await Savepoint.release("sync_mutation", on: db)
                result = written
            } catch {
                try await Savepoint.rollBack("sync_mutation", on: db)
                if let mark { SyncFeed.Batch.current?.restore(mark) }
                records.forget(PushRecords.Key(collection: mutation.collection, id: mutation.recordID))
                guard let problem = (error as? Problem) ?? write.problem(forViolation: error) else { throw error }
                result = rejected(mutation, problem)
            }
        } else {
            do {
                result = try await write(mutation, in: collections, user: user, now: now, records: &records, on: db)
            } catch let problem as Problem {
                // Raised before anything is written (ownership, the plan limit, the preferences' own rules).
                result = rejected(mutation, problem)
            }
        }
        return result
    }

    private static func write(
        _ mutation: PendingMutation, in collections: SyncedCollections, user: UserID, now: Date, records: inout PushRecords, on db: any SQLDatabase
    ) async throws -> Components.Schemas.SyncMutationResult {
        let collection = collections[mutation.collection]
        if case .rejected(let problem) = mutation.outcome { return rejected(mutation, problem) }
        let key = PushRecords.Key(collection: mutation.collection, id: mutation.recordID)
        let stamp = if let known = records.stamp(key) { known } else { try await SyncFeed.stamp(mutation.collection, id: mutation.recordID, of: user, on: db) }
        // A record live in the user's feed is theirs; any other id may be another user's row.
        if stamp.map({ $0.deleted }) ?? true, let table = collection.table, let id = UUID(uuidString: mutation.recordID),
            let owner = try await records.owner(key, table: table, id: id, on: db), owner != user.rawValue
        {
            throw RecordIDTaken().problem.prefixingFields(with: "mutations[\(mutation.index)].")
        }
        if mutation.operation == .delete, let stamp, stamp.deleted {
            return applied(mutation, version: stamp.version)  // already gone: nothing to do
        }
        if collection.isWrittenOnce, mutation.operation == .upsert, let stamp, !stamp.deleted {
            return applied(mutation, version: stamp.version)  // a stored record never changes: sending it again is a no-op
        }
        let decision = mutation.collection.policy.decide(
            mutation.operation, baseVersion: mutation.baseVersion, clientUpdatedAt: mutation.updatedAt, server: stamp
        )
        guard decision.applies else {
            return try await conflict(mutation, resolution: .serverWins, version: stamp?.version ?? 0, collections: collections, user: user, on: db)
        }
        let feedWrite = FeedWrite(user: user, now: now, updatedAt: mutation.updatedAt, currentVersion: stamp?.version ?? 0)
        let change: SyncChange
        do {
            switch mutation.outcome {
            case .upsert(let write):
                change = try await write.write(feedWrite, on: db)
            case .delete, .rejected:
                // A record without a row of the user's still gets its tombstone, so every device drops it.
                if let deleted = try await collection.delete(mutation.recordID, feedWrite, on: db) {
                    change = deleted
                } else {
                    change = try await feedWrite.record(mutation.collection, id: mutation.recordID, deleted: true, on: db)
                }
            }
        } catch let problem as Problem {
            throw problem.prefixingFields(with: "mutations[\(mutation.index)].")
        } catch let refusal as any ProblemConvertible {
            // A store's refusal (an id that is another user's record): the mutation's problem, as the REST answer.
            throw refusal.problem.prefixingFields(with: "mutations[\(mutation.index)].")
        }
        records.wrote(key, change.stamp, by: user)
        if decision == .clientWins {
            return try await conflict(mutation, resolution: .clientWins, version: change.stamp.version, collections: collections, user: user, on: db)
        }
        return applied(mutation, version: change.stamp.version)
    }

    // MARK: Results

    private static func applied(_ mutation: PendingMutation, version: Int) -> Components.Schemas.SyncMutationResult {
        .init(mutationId: mutation.mutationID, status: .applied, version: version)
    }

    private static func rejected(_ mutation: PendingMutation, _ problem: Problem) -> Components.Schemas.SyncMutationResult {
        .init(mutationId: mutation.mutationID, status: .rejected, problem: problem.wire(instance: "/v1/sync/push"))
    }

    /// A conflict result with the record as the server now holds it.
    private static func conflict(
        _ mutation: PendingMutation, resolution: Components.Schemas.SyncMutationResult.ResolutionPayload, version: Int,
        collections: SyncedCollections, user: UserID, on db: any SQLDatabase
    ) async throws -> Components.Schemas.SyncMutationResult {
        let stamp = try await SyncFeed.stamp(mutation.collection, id: mutation.recordID, of: user, on: db)
        var record: Components.Schemas.SyncChange?
        if let stamp {
            let change = SyncChange(collection: mutation.collection, recordID: mutation.recordID, seq: 0, stamp: stamp)
            record = try await SyncWire.wire([change], of: user, collections: collections, on: db).first
        }
        return .init(mutationId: mutation.mutationID, status: .conflict, version: version, resolution: resolution, serverRecord: record)
    }
}

/// What a push knows of its records before applying them, read with one query per collection (and table) instead of
/// two per mutation: each record's stamp in the user's feed and, for ids without a live stamp, whose row the id names.
/// Writes made by the push update it; a record it did not read is looked up as before.
struct PushRecords {
    struct Key: Hashable {
        var collection: SyncCollection
        var id: String
    }

    private var stamps: [Key: RecordStamp] = [:]
    private var readStamps: Set<Key> = []
    private var owners: [Key: UUID] = [:]
    private var readOwners: Set<Key> = []

    /// The feed's stamp of the record (`.some(nil)`: it has none); `nil` when the push did not read it.
    func stamp(_ key: Key) -> RecordStamp?? {
        readStamps.contains(key) ? .some(stamps[key]) : nil
    }

    /// The user whose row `id` names in `table` (nil: no row), read now if the push did not read it.
    func owner(_ key: Key, table: String, id: UUID, on db: any SQLDatabase) async throws -> UUID? {
        if readOwners.contains(key) { return owners[key] }
        return try await StoredStatement(#"SELECT "user_id" FROM "\#(table)" WHERE "id" = ?"#)(id).first(on: db)?.decode(column: "user_id", as: UUID.self)
    }

    /// The push wrote the record: its new stamp, and its row (if any) is the user's.
    mutating func wrote(_ key: Key, _ stamp: RecordStamp, by user: UserID) {
        stamps[key] = stamp
        readStamps.insert(key)
        if stamp.deleted { owners[key] = nil } else { owners[key] = user.rawValue }
        readOwners.insert(key)
    }

    /// What the push knew of the record no longer holds (its write was rolled back): it is looked up again.
    mutating func forget(_ key: Key) {
        readStamps.remove(key)
        readOwners.remove(key)
    }

    /// Reads the stamps and owners of the records `mutations` write (those not rejected while checking).
    static func read(_ mutations: [SyncPusher.PendingMutation], collections: SyncedCollections, user: UserID, on db: any SQLDatabase) async throws -> PushRecords {
        var records = PushRecords()
        var byCollection: [SyncCollection: [String]] = [:]
        for mutation in mutations {
            if case .rejected = mutation.outcome { continue }
            byCollection[mutation.collection, default: []].append(mutation.recordID)
        }
        for (collection, ids) in byCollection {
            let unique = Array(Set(ids))
            for (id, stamp) in try await SyncFeed.stamps(collection, ids: unique, of: user, on: db) {
                records.stamps[Key(collection: collection, id: id)] = stamp
            }
            records.readStamps.formUnion(unique.map { Key(collection: collection, id: $0) })
            // Owners of the ids without a live stamp: they may name another user's row.
            guard let table = collections[collection].table else { continue }
            let unowned = unique.filter { records.stamps[Key(collection: collection, id: $0)].map { $0.deleted } ?? true }
                .compactMap { id in UUID(uuidString: id).map { (id, $0) } }
            for start in stride(from: 0, to: unowned.count, by: 250) {
                let chunk = unowned[start..<min(start + 250, unowned.count)]
                let byUUID = Dictionary(chunk.map { ($0.1, $0.0) }, uniquingKeysWith: { first, _ in first })
                let statement = StoredStatement(
                    #"SELECT "id", "user_id" FROM "\#(table)" WHERE "id" IN ("# + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")"
                )
                for row in try await statement.with(chunk.map { $0.1 as any Encodable & Sendable }).all(on: db) {
                    guard let id = byUUID[try row.decode(column: "id", as: UUID.self)] else { continue }
                    records.owners[Key(collection: collection, id: id)] = try row.decode(column: "user_id", as: UUID.self)
                }
                records.readOwners.formUnion(chunk.map { Key(collection: collection, id: $0.0) })
            }
        }
        return records
    }

}

extension Problem {
    /// The problem with `prefix` put before every field path (and the detail rewritten to match).
    func prefixingFields(with prefix: String) -> Problem {
        guard !fieldErrors.isEmpty else { return self }
        var copy = self
        copy.fieldErrors = fieldErrors.map { .init(field: prefix + $0.field, message: $0.message) }
        copy.detail = copy.fieldErrors.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
        return copy
    }
}

extension Error {
    /// ``Problem/prefixingFields(with:)`` for a thrown problem; other errors unchanged.
    fileprivate func prefixingFields(with prefix: String) -> any Error {
        (self as? Problem)?.prefixingFields(with: prefix) ?? self
    }
}

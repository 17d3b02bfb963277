import FitBaseCore
import Foundation
import Synchronization

/// The catalog as this instance holds it in memory: every workout and program, with each listing order worked out
/// once, kept under the `catalog` generation (see ``CacheGenerations``). Every catalog write (the admin API, the
/// importer, `fitbase seed`) bumps the generation in its transaction, so a snapshot is never served after a write
/// that changed it has committed; the next read loads a new one (one load at a time, shared by every reader).
final class CatalogCache: Sendable {
    /// One generation of the catalog.
    struct Snapshot: Sendable {
        let generation: Int64
        /// Every workout, in id order.
        let workouts: [CatalogWorkout]
        let index: [WorkoutID: Int]
        /// For each listing order, the positions in ``workouts`` in that order (ties on title, then id, as SQL did).
        let orders: [WorkoutSort: [Int]]
        /// Programs by title, then id.
        let programs: [CatalogProgram]

        init(generation: Int64, workouts: [(workout: CatalogWorkout, createdAt: Date)], programs: [CatalogProgram]) {
            self.generation = generation
            let sorted = workouts.sorted { Self.idPrecedes($0.workout.id, $1.workout.id) }
            self.workouts = sorted.map(\.workout)
            self.index = Dictionary(uniqueKeysWithValues: self.workouts.enumerated().map { ($0.element.id, $0.offset) })
            let createdAt = sorted.map(\.createdAt)
            let all = self.workouts
            func byTitle(_ a: Int, _ b: Int) -> Bool {
                if all[a].title != all[b].title { return all[a].title.utf8.lexicographicallyPrecedes(all[b].title.utf8) }
                return Self.idPrecedes(all[a].id, all[b].id)
            }
            func order(_ first: (Int, Int) -> Bool?) -> [Int] {
                all.indices.sorted { a, b in first(a, b) ?? byTitle(a, b) }
            }
            self.orders = [
                .featured: order { all[$0].isFeatured == all[$1].isFeatured ? nil : all[$0].isFeatured },
                .newest: order { createdAt[$0] == createdAt[$1] ? nil : createdAt[$0] > createdAt[$1] },
                .title: order { _, _ in nil },
                .shortest: order { all[$0].durationMinutes == all[$1].durationMinutes ? nil : all[$0].durationMinutes < all[$1].durationMinutes },
                .longest: order { all[$0].durationMinutes == all[$1].durationMinutes ? nil : all[$0].durationMinutes > all[$1].durationMinutes },
            ]
            self.programs = programs.sorted { a, b in
                a.title != b.title ? a.title.utf8.lexicographicallyPrecedes(b.title.utf8) : Self.idPrecedes(a.id.rawValue, b.id.rawValue)
            }
        }

        func workout(_ id: WorkoutID) -> CatalogWorkout? {
            index[id].map { workouts[$0] }
        }

        /// One page of the workouts `query` keeps (among `searched` when the query has words to search), and whether
        /// more follow.
        func page(_ query: WorkoutQuery, searched: Set<WorkoutID>?, offset: Int, limit: Int) -> (workouts: [CatalogWorkout], hasMore: Bool) {
            let (positions, hasMore) = pagePositions(query, searched: searched, offset: offset, limit: limit)
            return (positions.map { workouts[$0] }, hasMore)
        }

        /// ``page(_:searched:offset:limit:)`` as positions in ``workouts``.
        func pagePositions(_ query: WorkoutQuery, searched: Set<WorkoutID>?, offset: Int, limit: Int) -> (positions: [Int], hasMore: Bool) {
            let usable = query.equipment.map { $0.union([.none]) }
            var page: [Int] = []
            page.reserveCapacity(min(limit, workouts.count))
            var skipped = 0
            for position in orders[query.sort] ?? [] {
                let workout = workouts[position]
                if let searched, !searched.contains(workout.id) { continue }
                guard query.keeps(workout, usableEquipment: usable) else { continue }
                if skipped < offset {
                    skipped += 1
                    continue
                }
                if page.count == limit { return (page, true) }
                page.append(position)
            }
            return (page, false)
        }

        private static func idPrecedes(_ a: WorkoutID, _ b: WorkoutID) -> Bool {
            idPrecedes(a.rawValue, b.rawValue)
        }

        /// UUIDs in byte order: how both engines order the id column.
        private static func idPrecedes(_ a: UUID, _ b: UUID) -> Bool {
            withUnsafeBytes(of: a.uuid) { a in withUnsafeBytes(of: b.uuid) { b in a.lexicographicallyPrecedes(b) } }
        }
    }

    private let database: Database
    private let load: @Sendable (Int64) async throws -> Snapshot
    private let state = Mutex<(snapshot: Snapshot?, loading: (generation: Int64, task: Task<Snapshot, any Error>)?)>((nil, nil))

    init(database: Database, load: @escaping @Sendable (Int64) async throws -> Snapshot) {
        self.database = database
        self.load = load
    }

    /// The catalog as it is now, when that is known without waiting: the generation trusted from memory (SQLite) and
    /// its snapshot loaded (the rule ``snapshot()`` answers from memory by); `nil` otherwise.
    func snapshotAtHand() -> Snapshot? {
        guard let generation = database.generations.trusted(.catalog) else { return nil }
        return state.withLock { state in state.snapshot.flatMap { $0.generation >= generation ? $0 : nil } }
    }

    /// The catalog as it is now.
    func snapshot() async throws -> Snapshot {
        let generation = try await database.generations.current(.catalog, on: database)
        enum Found {
            case ready(Snapshot)
            case loading(Task<Snapshot, any Error>)
        }
        let found: Found = state.withLock { state in
            if let snapshot = state.snapshot, snapshot.generation >= generation { return .ready(snapshot) }
            if let loading = state.loading, loading.generation >= generation { return .loading(loading.task) }
            let load = self.load
            let task = Task { try await load(generation) }
            state.loading = (generation, task)
            return .loading(task)
        }
        let task: Task<Snapshot, any Error>
        switch found {
        case .ready(let snapshot): return snapshot
        case .loading(let loading): task = loading
        }
        let snapshot = try await task.value
        state.withLock { state in
            if state.snapshot.map({ $0.generation < snapshot.generation }) ?? true { state.snapshot = snapshot }
            if state.loading?.generation == snapshot.generation { state.loading = nil }
        }
        return snapshot
    }
}

extension WorkoutQuery {
    /// Whether `workout` passes every filter but the text search.
    func keeps(_ workout: CatalogWorkout, usableEquipment: Set<Equipment>?) -> Bool {
        if !types.isEmpty, !types.contains(workout.type) { return false }
        if let intensity, workout.intensity != intensity { return false }
        if let phase, !workout.phases.contains(phase) { return false }
        if let targetArea, !workout.targetAreas.contains(targetArea) { return false }
        if let usableEquipment, !workout.equipment.allSatisfy(usableEquipment.contains) { return false }
        if let minDuration, workout.durationMinutes < minDuration { return false }
        if let maxDuration, workout.durationMinutes > maxDuration { return false }
        if let featured, workout.isFeatured != featured { return false }
        if let premium, workout.isPremium != premium { return false }
        return true
    }
}
